#pragma once
// The steps of one Run attempt, in order, for RunExecutor. Internal to the runner.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <set>
#include <string>
#include <optional>
#include <string_view>

#include "protocol/plan_view.hpp"
#include "runner/state/run_credentials.hpp"
#include "redaction/log_sink.hpp"
#include "runner/policy/provider_pins.hpp"
#include "runner/run_types.hpp"
#include "runner/tofu/cancel_signal.hpp"
#include "runner/tofu/process_launcher.hpp"
#include "runner/state/run_workspace.hpp"
#include "runner/state/state_checkpoint.hpp"
#include "runner/policy/module_policy.hpp"
#include "runner/tofu/tofu_builds.hpp"
#include "runner/tofu/tofu_cli.hpp"

namespace takosumi::runner {

class RunFlow {
 public:
  // Everything referenced must outlive the flow; outcome is filled in as the steps go.
  RunFlow(boost::asio::thread_pool& blocking, const RunnerSettings& settings,
          ProcessLauncher& launcher, CancelSignal& cancel, RunInputs& inputs, redaction::LogSink log,
          RunOutcome& outcome);
  RunFlow(const RunFlow&) = delete;
  RunFlow& operator=(const RunFlow&) = delete;
  ~RunFlow();  // wipes the workspace if async_finish did not

  // Runs every step; the first failure ends the Run (after an apply, the state is still sealed).
  boost::asio::awaitable<Status> async_execute();
  // Records status and failure in the report and wipes the workspace.
  boost::asio::awaitable<void> async_finish(const Status& result);

 private:
  // The steps, in the order async_execute runs them.
  void begin_report();
  Status check_inputs() const;
  Status create_workspace();
  boost::asio::awaitable<Status> async_checkout();
  Status scrub_source() const;
  boost::asio::awaitable<Status> async_check_module_policy();
  boost::asio::awaitable<Status> async_restore_inputs();
  boost::asio::awaitable<Status> async_restore_prior_state();
  boost::asio::awaitable<Status> async_make_cgroup();
  Status start_tofu();
  boost::asio::awaitable<Status> async_init();
  boost::asio::awaitable<Status> async_check_mirror();
  Status check_providers();
  Status check_lock_against_pins(const std::filesystem::path& lock) const;
  Status check_committed_lock() const;
  boost::asio::awaitable<Status> async_choose_tofu();
  Result<std::vector<VersionRequirement>> version_requirements() const;
  Status check_tofu_version() const;
  Status prepare_credentials();
  enum class HookPoint { pre, post };
  boost::asio::awaitable<Status> async_hook(HookPoint point);
  std::optional<SandboxOptions::Confine> hook_confine(
      const std::optional<SandboxOptions::Confine>& tofu_confine) const;
  boost::asio::awaitable<Status> async_plan();
  boost::asio::awaitable<Status> async_apply();
  boost::asio::awaitable<Status> async_drift_check();

  // Parts of the steps.
  boost::asio::awaitable<Status> async_tofu_version();
  boost::asio::awaitable<Result<bool>> async_tofu_plan(const std::filesystem::path& plan_file,
                                                       PlanMode mode);
  boost::asio::awaitable<Result<boost::json::object>> async_show(const std::filesystem::path& plan_file);
  boost::asio::awaitable<Status> async_freeze(const std::filesystem::path& written,
                                              const std::filesystem::path& frozen);
  boost::asio::awaitable<Status> async_seal_plan();
  boost::asio::awaitable<Status> async_keep_plan_view(const protocol::PlanView& view);
  boost::asio::awaitable<Status> async_tofu_apply();
  boost::asio::awaitable<void> async_keep_newest_state(const Error& why);
  boost::asio::awaitable<Status> async_seal_new_state();
  boost::asio::awaitable<Status> async_publish_outputs();
  Status refuse_credential_outputs();
  Result<TofuOptions> tofu_options() const;
  Result<std::optional<SandboxOptions::Confine>> confine_options(
      bool network, const std::vector<std::filesystem::path>& providers) const;
  void remember_bundle_secrets();
  void remember(std::string_view what, std::string_view value);
  void notice(std::string_view line) const;
  void log_sealed_plan(const protocol::PlanView& view) const;
  Status named_limit(const Status& result) const;

  boost::asio::thread_pool& blocking_;
  const RunnerSettings& settings_;
  ProcessLauncher& launcher_;
  CancelSignal& cancel_;
  RunInputs& inputs_;
  const protocol::JobManifest& manifest_;
  redaction::LogSink log_;
  RunOutcome& outcome_;
  protocol::RunReport& report_;
  std::chrono::steady_clock::time_point deadline_;
  // The mirror the Run's tofu and sandbox use: tofu.providerMirror, or with tofu.providerPins the
  // verified copy of its pinned packages (runner/policy/verified_mirror.hpp).
  std::filesystem::path provider_mirror_;
  std::vector<ProviderPin> pins_;  // tofu.providerPins as read for this Run (empty without)
  // The OpenTofu the Run uses: tofu.binary, or the tofu.versionsDir build its version constraints
  // chose (async_choose_tofu), and those constraints.
  std::filesystem::path tofu_binary_;
  std::vector<VersionRequirement> version_requirements_;
  // The working directory's required_version literals, from the policy scan before init.
  std::optional<std::vector<ModuleScan::RequiredVersion>> root_required_versions_;
  bool required_versions_cut_ = false;
  std::optional<RunWorkspace> workspace_;
  std::optional<RunCgroup> cgroup_;  // the Run's cgroup, when there is one
  std::filesystem::path module_dir_;
  std::optional<TofuCli> tofu_;
  redaction::SecretSet& secrets_;
  protocol::RunPolicy policy_;  // the pool's and the manifest's, combined
  std::optional<RunCredentials> credentials_;
  std::set<std::string> locked_providers_;  // from the lock file, read once after init
  bool new_state_empty_ = false;  // the sealed state holds no resources and no outputs

  boost::json::object new_state_outputs_;  // `tofu output -json`'s shape (state_outputs)
  // A plan Run's sensitive values from `tofu show -json`, sealed with the plan.
  std::vector<SecretBytes> plan_secret_values_;
  // An apply's: true once they came out of the sealed plan (no `tofu show` needed).
  bool plan_secrets_restored_ = false;
};

}  // namespace takosumi::runner
