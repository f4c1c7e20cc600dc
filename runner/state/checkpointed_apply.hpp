#pragma once
// An apply that leaves checkpoints: while it runs, every new state tofu persists is sealed into
// the Run's outbox (StateCheckpointer), so a crash in the middle of it does not forget what was
// created. Runs on the io executor; the checkpoints themselves are taken on the thread pool.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <string>

#include "common/error.hpp"
#include "runner/state/state_checkpoint.hpp"

namespace takosumi::runner {

// Awaits `apply` and returns its result; until it ends, checkpointer.checkpoint() is tried every
// interval. A failed checkpoint is logged once (naming run_id) and retried on the next change: it
// never stops the apply. A checkpoint in flight when the apply ends is finished first. Cancelling
// the apply is the caller's business (its CancelSignal): the loop ends with it.
boost::asio::awaitable<Status> async_checkpointed_apply(boost::asio::awaitable<Status> apply,
                                                        StateCheckpointer& checkpointer,
                                                        boost::asio::thread_pool& blocking,
                                                        std::chrono::milliseconds interval,
                                                        std::string run_id);

}  // namespace takosumi::runner
