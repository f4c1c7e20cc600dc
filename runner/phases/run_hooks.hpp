#pragma once
// The operator's hooks around a Run's tofu commands (hooks.prePlan … postApply): plan hooks
// surround plans, destroy plans and drift checks; apply hooks surround applies. They run the way
// tofu's commands do (runner/tofu/tofu_cli.hpp async_hook): sandboxed, redacted, cancellable.
#include <boost/asio/awaitable.hpp>

#include "common/error.hpp"
#include "config/service_settings.hpp"
#include "runner/phases/phase_context.hpp"

namespace takosumi::runner {

enum class HookPoint { pre, post };

// A failing pre-hook fails the Run (hook_failed) before `tofu init`. A post-hook runs after the
// plan or apply succeeded, on its own time limit (not the Run's deadline); whatever becomes of it
// (an exit code, its time limit, a cancel, a sandbox that would not start) is noted in the Run's
// log and changes nothing: what tofu did stands. Nothing configured at that point: nothing runs.
boost::asio::awaitable<Status> async_run_hook(const PhaseContext& run, const config::HooksConfig& hooks,
                                              HookPoint point);

}  // namespace takosumi::runner
