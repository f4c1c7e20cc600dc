#pragma once
// Agents long-polling for work park here until a Run may have become claimable (notify), the
// server stops, their deadline passes or their client goes away. Single-threaded: use from the
// io_context thread only.
//
// A notification wakes a few waiters of each agent pool, the longest-waiting first, not all of
// them: with a hundred slots polling, waking every one for each queued Run made every Run cost a
// hundred claims (each a database round trip on PostgreSQL, on every replica). A woken waiter
// that fills its slots passes the wake on to the next of its pool, so a burst of Runs is taken
// in a chain; and every waiter looks again at least once a second whatever happens (the caller's
// deadline), so a Run no woken waiter could take (labels) waits at most that long.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <list>
#include <string>

#include "controlplane/http/http_types.hpp"

namespace takosumi::controlplane {

class ClaimWaiters {
 public:
  // How many waiters of each pool one notification wakes.
  static constexpr int kWakePerPool = 1;

  // Returns at the deadline, when woken or stopped, or as soon as client (when given) is seen to
  // have closed its connection. pool: the waiting agent's.
  boost::asio::awaitable<void> async_wait_until(std::chrono::steady_clock::time_point deadline,
                                                std::string pool, ClientLink* client = nullptr);
  // A Run may be claimable: wakes kWakePerPool waiters of each pool here and, through the
  // broadcast when one is set, as many on every other control-plane process on the same store.
  void notify();
  // Wakes kWakePerPool waiters of each pool here (what another process's broadcast arrives as),
  // or of `pool` only when given.
  void wake_local(const std::string& pool = {});
  // The way to reach the other processes (PostgreSQL's NOTIFY); none on SQLite.
  void set_broadcast(std::function<void()> broadcast) { broadcast_ = std::move(broadcast); }
  // Wakes everyone and makes later waits return at once.
  void stop();
  bool stopped() const { return stopped_; }

 private:
  struct Waiter {
    boost::asio::steady_timer* timer;
    std::string pool;
    bool woken = false;
  };
  std::list<Waiter> waiters_;  // oldest first
  std::function<void()> broadcast_;
  bool stopped_ = false;
};

}  // namespace takosumi::controlplane
