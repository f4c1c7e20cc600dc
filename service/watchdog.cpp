#include "service/watchdog.hpp"

#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <thread>

namespace takosumi::service {

Watchdog::Watchdog(boost::asio::any_io_executor ex, ServiceNotifier& notifier)
    : notifier_(notifier), timer_(ex) {}

void Watchdog::start() {
  if (!notifier_.watchdog_interval()) return;
  notifier_.watchdog_ping();
  arm();
}

void Watchdog::stop() {
  stopped_ = true;
  timer_.cancel();
}

void Watchdog::arm() {
  timer_.expires_after(*notifier_.watchdog_interval() / 2);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    notifier_.watchdog_ping();
    arm();
  });
}

std::unique_ptr<boost::asio::signal_set> install_test_stall_hook(boost::asio::any_io_executor ex) {
  const char* hooks = std::getenv("TAKOSUMI_TEST_HOOKS");
  if (hooks == nullptr || std::string_view(hooks) != "1") return nullptr;
  auto signals = std::make_unique<boost::asio::signal_set>(ex, SIGUSR2);
  signals->async_wait([](const boost::system::error_code& ec, int) {
    if (ec) return;
    spdlog::warn("SIGUSR2 under TAKOSUMI_TEST_HOOKS: stalling the event loop");
    std::this_thread::sleep_for(std::chrono::hours(1));
  });
  return signals;
}

}  // namespace takosumi::service
