#pragma once
// Agents long-polling for work park here until a Run is queued (notify_all), the server stops,
// their deadline passes or their client goes away. Single-threaded: use from the io_context thread
// only.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <list>

#include "controlplane/http/http_types.hpp"

namespace takosumi::controlplane {

class ClaimWaiters {
 public:
  // Returns at the deadline, on notify_all or stop, or as soon as client (when given) is seen to
  // have closed its connection.
  boost::asio::awaitable<void> async_wait_until(std::chrono::steady_clock::time_point deadline,
                                                ClientLink* client = nullptr);
  // Wakes the waiters here and, through the broadcast when one is set, those of every other
  // control-plane process on the same store.
  void notify_all();
  // Wakes the waiters here only (what another process's broadcast arrives as).
  void wake_local();
  // The way to reach the other processes (PostgreSQL's NOTIFY); none on SQLite.
  void set_broadcast(std::function<void()> broadcast) { broadcast_ = std::move(broadcast); }
  // Wakes everyone and makes later waits return at once.
  void stop();
  bool stopped() const { return stopped_; }

 private:
  std::list<boost::asio::steady_timer*> timers_;
  std::function<void()> broadcast_;
  bool stopped_ = false;
};

}  // namespace takosumi::controlplane
