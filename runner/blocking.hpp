#pragma once
// Runs blocking work (libgit2, hashing, large JSON) on a thread pool and resumes the awaiting
// coroutine on its own executor. An exception thrown by the work is rethrown to the awaiter.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <type_traits>
#include <utility>

namespace takosumi::runner {

template <class F>
boost::asio::awaitable<std::invoke_result_t<F&>> async_blocking(boost::asio::thread_pool& pool,
                                                               F work) {
  using R = std::invoke_result_t<F&>;
  co_return co_await boost::asio::co_spawn(
      pool.get_executor(),
      [w = std::move(work)]() mutable -> boost::asio::awaitable<R> { co_return w(); },
      boost::asio::use_awaitable);
}

}  // namespace takosumi::runner
