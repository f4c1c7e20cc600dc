// RunFlow, part: the operator's hooks around the tofu commands (hooks.prePlan … postApply). See
// run_flow.cpp for where they run.
#include "common/error_codes.hpp"
#include "runner/run_flow.hpp"

namespace takosumi::runner {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

bool is_apply(protocol::RunType type) { return type == protocol::RunType::apply; }

}  // namespace

// A failing pre-hook fails the Run (hook_failed) before `tofu init`. A post-hook runs after the
// plan or apply succeeded, on its own time limit (not the Run's deadline); whatever becomes of it
// (an exit code, its time limit, a cancel, a sandbox that would not start) is noted in the Run's
// log and changes nothing: what tofu did stands.
asio::awaitable<Status> RunFlow::async_hook(HookPoint point) {
  const auto& hooks = settings_.hooks;
  const bool apply = is_apply(manifest_.type);
  const bool pre = point == HookPoint::pre;
  const fs::path& program = apply ? (pre ? hooks.pre_apply : hooks.post_apply)
                                  : (pre ? hooks.pre_plan : hooks.post_plan);
  if (program.empty()) co_return Status{};
  const std::string name = std::string(apply ? (pre ? "preApply" : "postApply")
                                             : (pre ? "prePlan" : "postPlan"));
  notice("hook " + name + ": " + program.string());
  // Named: g++ 12 mishandles a braced temporary inside a co_await expression.
  std::vector<std::string> extra;
  extra.push_back("TAKOSUMI_HOOK=" + name);
  extra.push_back("TAKOSUMI_RUN_ID=" + manifest_.run_id);
  extra.push_back("TAKOSUMI_RUN_TYPE=" + std::string(protocol::to_string(manifest_.type)));
  extra.push_back("TAKOSUMI_CAPSULE_ID=" + manifest_.capsule_id);
  auto ended = co_await tofu_->async_hook(program, hooks.timeout, apply, std::move(extra), pre);
  if (!ended && !pre) {
    notice("warning: hook " + name + ": " + ended.error().to_string() + "; the Run's result stands");
    co_return Status{};
  }
  if (!ended) co_return std::unexpected(ended.error());
  if (ended->exit_code == 0 && !ended->timed_out) co_return Status{};
  const std::string why =
      ended->timed_out ? "ran past hooks.timeoutSeconds (" + std::to_string(hooks.timeout.count()) + " s)"
                       : "exited " + std::to_string(ended->exit_code);
  if (!pre) {
    notice("warning: hook " + name + " " + why + "; the Run's result stands");
    co_return Status{};
  }
  co_return fail(errc::kHookFailed, "hook " + name + " (" + program.string() + ") " + why +
                                        "; tofu was not started");
}

}  // namespace takosumi::runner
