#pragma once
// Agents long-polling for work park here until a Run is queued (notify_all), the server stops,
// or their deadline passes. Single-threaded: use from the io_context thread only.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <list>

namespace takosumi::controlplane {

class ClaimWaiters {
 public:
  boost::asio::awaitable<void> async_wait_until(std::chrono::steady_clock::time_point deadline);
  void notify_all();
  // Wakes everyone and makes later waits return at once.
  void stop();
  bool stopped() const { return stopped_; }

 private:
  std::list<boost::asio::steady_timer*> timers_;
  bool stopped_ = false;
};

}  // namespace takosumi::controlplane
