#include "controlplane/runs/claim_waiters.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <map>

namespace takosumi::controlplane {

boost::asio::awaitable<void> ClaimWaiters::async_wait_until(
    std::chrono::steady_clock::time_point deadline, std::string pool, ClientLink* client) {
  if (stopped_) co_return;
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, deadline);
  auto it = waiters_.insert(waiters_.end(), Waiter{&timer, std::move(pool)});
  // A poll whose client went away is no one to hand a wake to.
  if (client) client->on_gone([&timer, it] {
    it->woken = true;
    timer.cancel();
  });
  // Cancellation (woken, client gone) and expiry all just end the wait.
  (void)co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  if (client) client->on_gone(nullptr);
  waiters_.erase(it);
}

void ClaimWaiters::notify() {
  wake_local();
  if (broadcast_ && !stopped_) broadcast_();
}

void ClaimWaiters::wake_local(const std::string& pool) {
  std::map<std::string, int> woken;
  for (auto& w : waiters_) {
    if (w.woken || (!pool.empty() && w.pool != pool)) continue;
    if (++woken[w.pool] > kWakePerPool) continue;
    w.woken = true;
    w.timer->cancel();
  }
}

void ClaimWaiters::stop() {
  stopped_ = true;
  for (auto& w : waiters_) {
    w.woken = true;
    w.timer->cancel();
  }
}

}  // namespace takosumi::controlplane
