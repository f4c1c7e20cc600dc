#include "runner/state/checkpointed_apply.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "common/offload.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;

// Runs while `applying` (the apply clears it and cancels `wake`). It stops on a flag, not by
// cancellation: a cancelled co_await throws in Asio, and the checkpoint in flight must finish
// anyway. Awaited together with the apply, whose frame owns the references.
asio::awaitable<void> async_checkpoint_loop(StateCheckpointer& checkpointer, asio::thread_pool& blocking,
                                            std::chrono::milliseconds interval, const std::string& run_id,
                                            const bool& applying, asio::steady_timer& wake) {
  bool warned = false;
  while (applying) {
    wake.expires_after(interval);
    co_await wake.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!applying) break;
    auto taken = co_await async_offload(blocking.get_executor(), [&checkpointer] { return checkpointer.checkpoint(); });
    if (!taken && !warned) {
      warned = true;
      spdlog::warn("run {}: state checkpoint: {}", run_id, taken.error().to_string());
    }
  }
}

}  // namespace

asio::awaitable<Status> async_checkpointed_apply(asio::awaitable<Status> apply,
                                                 StateCheckpointer& checkpointer,
                                                 asio::thread_pool& blocking,
                                                 std::chrono::milliseconds interval,
                                                 std::string run_id) {
  bool applying = true;
  asio::steady_timer wake(co_await asio::this_coro::executor);
  auto applied = [&]() -> asio::awaitable<Status> {
    auto result = co_await std::move(apply);
    applying = false;
    wake.cancel();
    co_return result;
  };
  using namespace asio::experimental::awaitable_operators;
  co_return co_await (applied() &&
                      async_checkpoint_loop(checkpointer, blocking, interval, run_id, applying, wake));
}

}  // namespace takosumi::runner
