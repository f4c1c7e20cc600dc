#pragma once
// Runs blocking work (libgit2, hashing large files) on a thread pool and resumes the awaiting
// coroutine on its own executor with the result (or rethrows the work's exception there); that executor is kept busy meanwhile, so the
// io_context does not run out of work. `work` must not touch io-thread-only state (the database,
// ClaimWaiters), nor start a process through Boost.Process: its launcher calls notify_fork on
// the io_context, which only the io_context's own thread may do. Written as a plain initiation, not a coroutine: g++ 12 mishandles coroutine
// parameters that are lambdas with captures.
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace takosumi {
namespace detail {
template <class R>
struct OffloadSignature {
  using type = void(std::exception_ptr, R);
};
template <>
struct OffloadSignature<void> {
  using type = void(std::exception_ptr);
};
}  // namespace detail

template <class F>
auto async_offload(boost::asio::thread_pool::executor_type pool, F work) {
  namespace asio = boost::asio;
  using R = std::invoke_result_t<F&>;
  static_assert(std::is_void_v<R> || std::is_default_constructible_v<R>,
                "the awaiter is handed an R beside a rethrown exception: R needs a default");
  // The awaiter gets the result, or the work's exception rethrown: nothing escapes on the pool.
  using Signature = typename detail::OffloadSignature<R>::type;
  return asio::async_initiate<const asio::use_awaitable_t<>&, Signature>(
      [pool](auto handler, F work) {
        auto home = asio::prefer(asio::get_associated_executor(handler),
                                 asio::execution::outstanding_work.tracked);
        asio::post(pool, [handler = std::move(handler), work = std::move(work), home]() mutable {
          if constexpr (std::is_void_v<R>) {
            std::exception_ptr failure;
            try {
              work();
            } catch (...) {
              failure = std::current_exception();
            }
            asio::post(home, [handler = std::move(handler), failure]() mutable {
              std::move(handler)(failure);
            });
          } else {
            std::exception_ptr failure;
            std::optional<R> result;
            try {
              result.emplace(work());
            } catch (...) {
              failure = std::current_exception();
            }
            asio::post(home, [handler = std::move(handler), failure,
                              result = std::move(result)]() mutable {
              // use_awaitable rethrows `failure` and ignores the value handed with it.
              if (failure) return std::move(handler)(failure, R{});
              std::move(handler)(failure, std::move(*result));
            });
          }
        });
      },
      asio::use_awaitable, std::move(work));
}

}  // namespace takosumi
