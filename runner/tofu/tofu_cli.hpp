#pragma once
// The OpenTofu command line for one Run: the CLI config (filesystem mirror only, so no network),
// one sandbox for all its commands (runner/tofu/phase_sandbox.hpp) where takosumi-confine serves them,
// the allowlisted environment, and one async_ function per command. Every command's output goes
// to the log redacted and line by line, except the data commands (version/show/output -json) whose stdout is
// captured to a workspace file: plan JSON and output JSON carry sensitive values in plaintext.
// Failures name the command and end with tofu's last diagnostic lines. A cancel request or the
// Run's deadline interrupts the running command (cancelled / timed_out).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "protocol/variables.hpp"
#include "runner/tofu/cancel_signal.hpp"
#include "runner/tofu/disk_budget.hpp"
#include "redaction/log_sink.hpp"
#include "runner/tofu/process_launcher.hpp"
#include "runner/state/run_credentials.hpp"
#include "runner/state/run_workspace.hpp"
#include "runner/tofu/phase_sandbox.hpp"
#include "runner/tofu/sandbox.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::runner {

// normal: `plan`; destroy: `plan -destroy`; refresh_only: `plan -refresh-only -lock=false`
// (drift check: reads the real objects, changes nothing, takes no lock on the state).
enum class PlanMode { normal, destroy, refresh_only };

struct TofuOptions {
  std::filesystem::path binary;
  std::filesystem::path provider_mirror;
  std::chrono::steady_clock::time_point deadline;  // for all commands of the Run together
  std::chrono::milliseconds kill_grace{std::chrono::seconds(30)};
  // Every command runs in this sandbox (with the workspace writable); none: unsandboxed.
  std::optional<SandboxOptions> sandbox;
  ProcessLimits limits;
  // takosumi-supervise: when set, every command runs under it (outside the sandbox), so the
  // agent's death interrupts tofu instead of killing it; lock_file is held while a command runs.
  std::optional<std::filesystem::path> supervisor;
  std::optional<std::filesystem::path> lock_file;
  std::uint64_t max_show_json = 64u << 20;  // `show -json` larger → limit_exceeded
  // Every command joins this cgroup (runner/tofu/run_cgroups.hpp) before it executes.
  std::vector<std::filesystem::path> cgroup_procs;
  // While each command runs, the workspace's size is measured on `blocking` every
  // kWorkspaceCheck; past the budget the command is interrupted and fails limit_exceeded.
  std::optional<DiskBudget> workspace_budget;
  boost::asio::thread_pool* blocking = nullptr;
  // Every command's output is redacted with it on the bytes, before it is cut into lines (see
  // redaction/redacted_lines.hpp); diagnostic lines kept for failure messages are redacted again,
  // patterns included, before they are shortened. Must outlive the TofuCli.
  const redaction::SecretSet* secrets = nullptr;
  // The exec allowlist of a hook's sandbox instead of tofu's (the hook, and what
  // sandbox.execAllow names for the programs it starts).
  std::optional<SandboxOptions::Confine> hook_confine;
};

// How a hook ended: its exit code, or that it ran out of its own time (hooks.timeoutSeconds).
struct HookExit {
  int exit_code = 0;
  bool timed_out = false;
};

// The CLI config's text: provider_installation with only a filesystem_mirror (no direct), so
// tofu never reaches a registry. The benchmark's bare tofu uses the same text.
std::string cli_config_text(const std::filesystem::path& provider_mirror);

class TofuCli {
 public:
  // module_dir is the working directory of every command. All references must outlive this.
  TofuCli(ProcessLauncher& launcher, CancelSignal& cancel, TofuOptions options,
          const RunWorkspace& workspace, std::filesystem::path module_dir, redaction::LogSink log);

  // Writes <ws>/.tofurc: provider_installation with only a filesystem_mirror (no direct).
  Status write_cli_config() const;
  // From now on every command first (re)writes <module>/takosumi.auto.tfvars.json (0600) with
  // the manifest's variables: the module directory is writable in the sandbox, so what an earlier
  // command left there is never trusted.
  // Before every command <module>/takosumi_override.tofu is written too, forcing the local backend,
  // so the state is always <module>/terraform.tfstate whatever backend the source declares. Both
  // go through RunWorkspace::write_in_source: never through a link the module left.
  void set_variables(protocol::Variables variables) { variables_ = std::move(variables); }

  const std::filesystem::path& binary() const { return options_.binary; }
  const std::filesystem::path& module_dir() const { return module_dir_; }

  std::vector<std::string> environment() const;  // "NAME=value"
  static std::vector<std::string> environment_names();
  // From now on `plan` and `apply` also get these credentials (see RunCredentials); nothing else
  // does. Must outlive this object or be reset to nullptr.
  void set_credentials(const RunCredentials* credentials) { credentials_ = credentials; }

  boost::asio::awaitable<Result<std::string>> async_version();  // e.g. "1.12.6"
  boost::asio::awaitable<Status> async_init();                  // opentofu_init_failed
  // true when the plan has changes (exit 2; for refresh_only that includes output changes
  // alone). opentofu_plan_failed.
  boost::asio::awaitable<Result<bool>> async_plan(const std::filesystem::path& plan_file,
                                                  PlanMode mode = PlanMode::normal);
  boost::asio::awaitable<Result<std::string>> async_show_json(const std::filesystem::path& plan_file);
  boost::asio::awaitable<Status> async_apply(const std::filesystem::path& plan_file);  // apply_failed
  // Runs an operator's hook (hooks.*) the way commands run: sandboxed (the hook alone bound
  // read-only into its sandbox, never into tofu's), output redacted into the log, cancellable.
  // The environment is tofu's, with the credentials of apply (apply hooks) or plan, and extra
  // ("TAKOSUMI_…=…"). within_deadline: the Run's deadline bounds it too. Errors: cancelled,
  // timed_out (the deadline came first), sandbox_failed; an exit code or the hook's own time
  // limit comes back as a value.
  boost::asio::awaitable<Result<HookExit>> async_hook(const std::filesystem::path& program,
                                                      std::chrono::seconds timeout, bool apply,
                                                      std::vector<std::string> extra,
                                                      bool within_deadline);

  // Starts the phase's sandbox now, when commands share one, without waiting for it to be ready:
  // what the Run does before its first command (the checkout, the policy scan) overlaps
  // bubblewrap's and confine's start. Nothing of the Run runs in the sandbox until its first
  // command. sandbox_failed.
  boost::asio::awaitable<Status> async_start_sandbox();

  // Ends the phase's sandbox, if one runs, and waits until nothing of it is left: before a hook
  // (whose supervisor takes the workspace lock) and before the workspace is wiped; the destructor
  // kills what is left otherwise. The next tofu command starts a new one.
  boost::asio::awaitable<void> async_close();

 private:
  struct Finished {
    int exit_code = -1;
  };
  // Runs one command; cancelled / timed_out / sandbox_failed come back as errors, any exit code
  // as a value. With capture, stdout goes to that file.
  boost::asio::awaitable<Result<Finished>> async_invoke(
      std::string_view command, std::vector<std::string> args,
      std::optional<std::filesystem::path> capture, std::uint64_t max_capture = 0);
  // Starts spec, its output to the log: a tofu command in the phase's sandbox (in_phase), a hook
  // sandboxed with confine's allowlist and supervised on its own.
  boost::asio::awaitable<Result<ProcessExit>> async_launch(
      const std::string& name, ProcessSpec spec, bool in_phase,
      const std::optional<SandboxOptions::Confine>& confine,
      std::optional<std::filesystem::path> also_read_only = std::nullopt, bool describes_plan = false);
  // The phase's sandbox, made at its first command (runner/tofu/phase_sandbox.hpp).
  Result<PhaseSandbox*> phase_sandbox();
  boost::asio::awaitable<Result<std::string>> async_capture(std::string_view command,
                                                            std::vector<std::string> args,
                                                            std::size_t max_bytes);
  Error failure(std::string_view code, std::string_view command, int exit_code) const;
  Error with_diagnostics(std::string_view code, std::string message) const;
  // Measures the workspace every kWorkspaceCheck until *done; past the budget it names the
  // limit in *over and interrupts the running command (the Run's cancel).
  boost::asio::awaitable<void> async_watch_workspace(std::shared_ptr<bool> done,
                                                     std::optional<std::string>& over);
  void remember_diagnostic(std::string_view line);
  // Keeps an (already redacted) stderr line as a diagnostic and notices bubblewrap's complaint.
  void note_stderr_line(std::string_view line);

  ProcessLauncher& launcher_;
  CancelSignal& cancel_;
  TofuOptions options_;
  const RunWorkspace& workspace_;
  std::filesystem::path module_dir_;
  redaction::LogSink log_;
  Status write_agent_files() const;

  const RunCredentials* credentials_ = nullptr;
  std::optional<protocol::Variables> variables_;
  std::deque<std::string> diagnostics_;  // last stderr lines of the current command
  std::string sandbox_error_;             // bubblewrap's own complaint, if it made one
  std::optional<boost::asio::steady_timer> watch_timer_;  // async_watch_workspace's
  // With takosumi-confine (sandbox.execControl), every tofu command of the phase runs in this one
  // sandbox; without it, each command gets a sandbox of its own.
  std::unique_ptr<PhaseSandbox> phase_;
};

}  // namespace takosumi::runner
