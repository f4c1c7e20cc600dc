#pragma once
// Runs blocking work (libgit2, hashing large files) on a thread pool and resumes the awaiting
// coroutine on its own executor with the result; that executor is kept busy meanwhile, so the
// io_context does not run out of work. `work` must not touch io-thread-only state (the database,
// ClaimWaiters). Written as a plain initiation, not a coroutine: g++ 12 mishandles coroutine
// parameters that are lambdas with captures.
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <type_traits>
#include <utility>

namespace takosumi::controlplane {

template <class F>
auto async_offload(boost::asio::thread_pool::executor_type pool, F work) {
  namespace asio = boost::asio;
  using R = std::invoke_result_t<F&>;
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(R)>(
      [pool](auto handler, F work) {
        auto home = asio::prefer(asio::get_associated_executor(handler),
                                 asio::execution::outstanding_work.tracked);
        asio::post(pool, [handler = std::move(handler), work = std::move(work), home]() mutable {
          R result = work();
          asio::post(home, [handler = std::move(handler), result = std::move(result)]() mutable {
            std::move(handler)(std::move(result));
          });
        });
      },
      asio::use_awaitable, std::move(work));
}

}  // namespace takosumi::controlplane
