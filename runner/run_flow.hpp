#pragma once
// The sequence of one Run attempt, for RunExecutor. Internal to the runner. What a step decides
// lives in the runner's subfolders as functions of explicit values — which OpenTofu
// (tofu/tofu_choice), the commands' sandbox and limits (run_tofu_request, tofu/run_tofu_options),
// the providers and pins (policy/verified_mirror, policy/provider_pins), the sealed inputs opened
// (state/run_restore), the tofu phase itself (phases/plan_phase, drift_phase, apply_phase), the
// limit a failure hit (tofu/limit_failure) —; RunFlow runs them in order (async_execute) and
// passes what one makes to the next.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "redaction/log_sink.hpp"
#include "runner/phases/phase_context.hpp"
#include "runner/phases/run_hooks.hpp"
#include "runner/policy/module_policy.hpp"
#include "runner/policy/provider_pins.hpp"
#include "runner/policy/verified_mirror.hpp"
#include "runner/run_types.hpp"
#include "runner/state/run_credentials.hpp"
#include "runner/state/run_workspace.hpp"
#include "runner/tofu/cancel_signal.hpp"
#include "runner/tofu/process_launcher.hpp"
#include "runner/tofu/tofu_choice.hpp"
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
  ~RunFlow();  // wipes the workspace if async_release did not

  // Runs every step; the first failure ends the Run (after an apply, the state is still sealed).
  boost::asio::awaitable<Status> async_execute();
  // Records status and failure in the report and wipes the Run's credentials.
  void finish_report(const Status& result);
  // Ends the Run's sandbox (waiting until nothing of it is left), removes its cgroup and wipes
  // its workspace: nothing the outcome needs (the artifacts are in the outbox).
  boost::asio::awaitable<void> async_release();

 private:
  // The steps, in the order async_execute runs them.
  void begin_report();
  Status check_inputs() const;
  Status create_workspace();
  boost::asio::awaitable<Status> async_checkout();
  Status scrub_source() const;
  boost::asio::awaitable<Result<ModuleScan>> async_check_module_policy();
  boost::asio::awaitable<Status> async_restore_inputs();
  boost::asio::awaitable<Status> async_make_cgroup();
  boost::asio::awaitable<Status> async_start_sandbox_early(const std::optional<RunProviders>& providers);
  Status start_tofu(const TofuChoice& tofu, const std::filesystem::path& mirror,
                    const std::filesystem::path& module_dir);
  // tofu init, or its verified result from the init cache.
  boost::asio::awaitable<Status> async_init(const RunProviders& providers, const ModuleScan& scan,
                                            const TofuChoice& tofu);
  boost::asio::awaitable<Result<RunProviders>> async_check_mirror();
  Status check_providers(const RunProviders& providers);
  boost::asio::awaitable<Result<TofuChoice>> async_choose_tofu(const ModuleScan& scan);
  Status check_tofu_version(const TofuChoice& tofu);
  Status prepare_credentials();
  boost::asio::awaitable<Status> async_hook(HookPoint point);
  // The tofu phase (runner/phases/), its results recorded in the report and the outcome.
  boost::asio::awaitable<Status> async_plan();
  boost::asio::awaitable<Status> async_apply();
  boost::asio::awaitable<Status> async_drift_check();

  // Parts of the steps.
  boost::asio::awaitable<Status> async_tofu_version(const std::filesystem::path& binary);
  PhaseContext phase_context();
  void notice(std::string_view line) const;

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
  // What the Run owns until async_release or the destructor wipes it: its workspace, cgroup,
  // commands and credentials. Values the steps make pass between them in async_execute.
  std::optional<RunWorkspace> workspace_;
  std::optional<RunCgroup> cgroup_;  // the Run's cgroup, when there is one
  std::filesystem::path module_dir_;
  std::optional<TofuCli> tofu_;
  redaction::SecretSet& secrets_;
  protocol::RunPolicy policy_;  // the pool's and the manifest's, combined
  std::optional<RunCredentials> credentials_;
  std::set<std::string> locked_providers_;  // from the lock file, read once after init
  // An apply's plan's sensitive values: true once they came out of the sealed plan (no `tofu
  // show` needed).
  bool plan_secrets_restored_ = false;
};

}  // namespace takosumi::runner
