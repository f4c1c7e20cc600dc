#pragma once
// Retries an awaitable operation that returns Result/Status while its error is retryable, waiting
// backoff_delay between attempts. max_attempts == 0 means "until it succeeds or fails for good";
// the wait is interruptible: a cancelled wait ends the loop with the last error.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdint>
#include <random>

#include "agent/session/backoff.hpp"
#include "agent/session/control_client.hpp"

namespace takosumi::agent {

template <class Op>
auto async_retry(Op op, std::uint32_t max_attempts) -> decltype(op()) {
  thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  for (std::uint32_t attempt = 0;; ++attempt) {
    auto result = co_await op();
    if (result || !is_retryable(result.error())) co_return result;
    if (max_attempts != 0 && attempt + 1 >= max_attempts) co_return result;
    timer.expires_after(backoff_delay(attempt, jitter(rng)));
    auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (ec) co_return result;
  }
}

}  // namespace takosumi::agent
