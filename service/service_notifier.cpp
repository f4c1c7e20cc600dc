#include "service/service_notifier.hpp"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstring>

namespace takosumi::service {

ServiceNotifier::ServiceNotifier() {
  std::uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID, if set, names this process.
  if (::sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
    watchdog_ = std::chrono::microseconds(usec);
}

// Failures are logged once and otherwise ignored: a lost notification must not stop the daemon
// (systemd then times the start out or restarts it, which is what it is for).
void ServiceNotifier::send(const std::string& message) {
  const int sent = ::sd_notify(0, message.c_str());
  static bool warned = false;
  if (sent < 0 && !warned) {
    warned = true;
    spdlog::warn("sd_notify: {}", std::strerror(-sent));
  }
}

void ServiceNotifier::ready() {
  ready_ = true;
  send("READY=1\nSTATUS=" + status_);
}

void ServiceNotifier::reloaded() {
  send(std::string(ready_ ? "READY=1\n" : "") + "STATUS=" + status_);
}

void ServiceNotifier::reloading() { send("RELOADING=1\nSTATUS=reloading the configuration"); }

void ServiceNotifier::stopping() { send("STOPPING=1\nSTATUS=" + status_); }

void ServiceNotifier::status(std::string_view line) {
  if (line == status_) return;
  status_ = std::string(line);
  // A newline would start another assignment in the datagram.
  for (char& c : status_)
    if (c == '\n' || c == '\r') c = ' ';
  send("STATUS=" + status_);
}

void ServiceNotifier::watchdog_ping() { send("WATCHDOG=1"); }

}  // namespace takosumi::service
