// RunFlow, part: which OpenTofu the Run uses (runner/tofu/tofu_choice.hpp) and the check of what
// it says it is. See run_flow.cpp for the steps in order.
#include "common/offload.hpp"
#include "runner/run_flow.hpp"

namespace takosumi::runner {

namespace asio = boost::asio;

// Chosen before any tofu or hook of the Run starts: the sandbox and the exec allowlist admit only
// that build.
asio::awaitable<Result<TofuChoice>> RunFlow::async_choose_tofu(const ModuleScan& scan) {
  const ExecControl* control = settings_.sandbox && settings_.exec_control ? &*settings_.exec_control : nullptr;
  TofuChoiceInputs inputs{settings_.tofu_binary, settings_.tofu_versions_dir,
                          control && (control->landlock.abi != 0 || control->required),
                          scan.required_versions, scan.required_versions_cut};
  // Only a tofu.versionsDir is listed (blocking); without one the choice reads no file.
  Result<TofuChoice> chosen;
  if (settings_.tofu_versions_dir.empty())
    chosen = choose_tofu(manifest_, inputs);
  else
    chosen = co_await async_offload(blocking_.get_executor(), [&] { return choose_tofu(manifest_, inputs); });
  if (!chosen) co_return std::unexpected(chosen.error());
  report_.tofu_build = chosen->build;
  if (!chosen->said.empty()) notice(chosen->said);
  co_return chosen;
}

// A directory named for another version is the operator's mistake, said in the Run's log.
Status RunFlow::check_tofu_version(const TofuChoice& tofu) {
  auto checked = runner::check_tofu_version(manifest_, tofu, report_.tofu_version,
                                            !settings_.tofu_versions_dir.empty());
  if (!checked) return std::unexpected(checked.error());
  if (!checked->empty()) notice(*checked);
  return {};
}

}  // namespace takosumi::runner
