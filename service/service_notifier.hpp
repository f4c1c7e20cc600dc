#pragma once
// The service manager's view of a daemon (systemd's notify protocol, sd_notify(3)): READY once the
// daemon does its work, a STATUS line kept current, STOPPING and RELOADING, and the watchdog's
// keep-alive. Without NOTIFY_SOCKET (not started by systemd, Type=notify not set) every call does
// nothing, so the daemons call it unconditionally. Used from the daemon's event-loop thread only.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace takosumi::service {

class ServiceNotifier {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID as systemd sets them for this process.
  ServiceNotifier();

  void ready();
  void reloading();  // followed by reloaded() once the reload is done (or refused)
  // READY=1 again after a reload, but only if the start had said it: a reload during the start
  // must not tell systemd the daemon works before it does.
  void reloaded();
  void stopping();
  // Sent only when it changed; ready() and reloading() repeat the current one.
  void status(std::string_view line);
  void watchdog_ping();

  // How often systemd wants WATCHDOG=1 (WatchdogSec=), when it wants it for this process.
  std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_; }
  const std::string& current_status() const { return status_; }

 private:
  void send(const std::string& message);

  std::optional<std::chrono::microseconds> watchdog_;
  std::string status_;
  bool ready_ = false;
};

}  // namespace takosumi::service
