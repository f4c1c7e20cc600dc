#include "runner/phases/run_hooks.hpp"

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {

namespace asio = boost::asio;
namespace fs = std::filesystem;

asio::awaitable<Status> async_run_hook(const PhaseContext& run, const config::HooksConfig& hooks, HookPoint point) {
  const auto& manifest = run.manifest;
  const bool apply = manifest.type == protocol::RunType::apply;
  const bool pre = point == HookPoint::pre;
  const fs::path& program = apply ? (pre ? hooks.pre_apply : hooks.post_apply)
                                  : (pre ? hooks.pre_plan : hooks.post_plan);
  if (program.empty()) co_return Status{};
  const std::string name = std::string(apply ? (pre ? "preApply" : "postApply")
                                             : (pre ? "prePlan" : "postPlan"));
  phase_notice(run, "hook " + name + ": " + program.string());
  // Named: g++ 12 mishandles a braced temporary inside a co_await expression.
  std::vector<std::string> extra;
  extra.push_back("TAKOSUMI_HOOK=" + name);
  extra.push_back("TAKOSUMI_RUN_ID=" + manifest.run_id);
  extra.push_back("TAKOSUMI_RUN_TYPE=" + std::string(protocol::to_string(manifest.type)));
  extra.push_back("TAKOSUMI_CAPSULE_ID=" + manifest.capsule_id);
  auto ended = co_await run.tofu.async_hook(program, hooks.timeout, apply, std::move(extra), pre);
  if (!ended && !pre) {
    phase_notice(run, "warning: hook " + name + ": " + ended.error().to_string() + "; the Run's result stands");
    co_return Status{};
  }
  if (!ended) co_return std::unexpected(ended.error());
  if (ended->exit_code == 0 && !ended->timed_out) co_return Status{};
  const std::string why =
      ended->timed_out ? "ran past hooks.timeoutSeconds (" + std::to_string(hooks.timeout.count()) + " s)"
                       : "exited " + std::to_string(ended->exit_code);
  if (!pre) {
    phase_notice(run, "warning: hook " + name + " " + why + "; the Run's result stands");
    co_return Status{};
  }
  co_return fail(errc::kHookFailed, "hook " + name + " (" + program.string() + ") " + why +
                                        "; tofu was not started");
}

}  // namespace takosumi::runner
