#include "controlplane/runs/claim_waiters.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace takosumi::controlplane {

boost::asio::awaitable<void> ClaimWaiters::async_wait_until(
    std::chrono::steady_clock::time_point deadline, ClientLink* client) {
  if (stopped_) co_return;
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, deadline);
  auto it = timers_.insert(timers_.end(), &timer);
  if (client) client->on_gone([&timer] { timer.cancel(); });
  // Cancellation (notify, client gone) and expiry all just end the wait.
  (void)co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  if (client) client->on_gone(nullptr);
  timers_.erase(it);
}

void ClaimWaiters::notify_all() {
  wake_local();
  if (broadcast_ && !stopped_) broadcast_();
}

void ClaimWaiters::wake_local() {
  for (auto* timer : timers_) timer->cancel();
}

void ClaimWaiters::stop() {
  stopped_ = true;
  wake_local();
}

}  // namespace takosumi::controlplane
