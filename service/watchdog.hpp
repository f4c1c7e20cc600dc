#pragma once
// Keeps systemd's watchdog fed from the daemon's event loop: a timer on the loop sends WATCHDOG=1
// at half the interval systemd asked for, so a loop that stops turning (a deadlock, a blocking
// call where none belongs) stops the pings and systemd restarts the daemon. Nothing when the
// watchdog is off. The loop ends with stop().
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>

#include "service/service_notifier.hpp"

namespace takosumi::service {

class Watchdog {
 public:
  Watchdog(boost::asio::any_io_executor ex, ServiceNotifier& notifier);
  void start();
  void stop();

 private:
  void arm();

  ServiceNotifier& notifier_;
  boost::asio::steady_timer timer_;
  bool stopped_ = false;
};

// For tests of the watchdog only: with TAKOSUMI_TEST_HOOKS=1 in the environment, SIGUSR2 blocks
// the event loop it is installed on for an hour, as a wedged loop would. Null otherwise; the
// caller keeps the result for as long as the loop runs.
std::unique_ptr<boost::asio::signal_set> install_test_stall_hook(boost::asio::any_io_executor ex);

}  // namespace takosumi::service
