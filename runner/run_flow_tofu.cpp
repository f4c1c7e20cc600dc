// RunFlow, part: the options of this Run's tofu commands — the sandbox, what it may read, and the
// kernel exec allowlist. See run_flow.cpp for the steps in order.
#include <spdlog/spdlog.h>

#include "common/error_codes.hpp"
#include "runner/policy/mirror_view.hpp"
#include "runner/run_flow.hpp"

namespace takosumi::runner {

namespace fs = std::filesystem;

Result<TofuOptions> RunFlow::tofu_options() const {
  TofuOptions options{tofu_binary_, provider_mirror_, deadline_,
                      settings_.kill_grace};
  options.limits = settings_.limits;
  // A Run's memory is its cgroup's when the agent manages one with memory; else each process's.
  const bool cgroup_memory = cgroup_ && settings_.cgroups && settings_.cgroups->limits_memory();
  if (settings_.memory_bytes > 0 && !cgroup_memory) options.limits.address_space_bytes = settings_.memory_bytes;
  if (settings_.workspace_bytes > 0) {
    options.limits.file_size_bytes = settings_.workspace_bytes;
    options.workspace_budget = DiskBudget{workspace_->root(), settings_.workspace_bytes};
  }
  options.blocking = &blocking_;
  options.max_show_json = settings_.max_plan_json_bytes;
  options.secrets = &secrets_;
  options.supervisor = settings_.supervisor;
  options.lock_file = workspace_->lock_file();
  if (cgroup_) options.cgroup_procs = cgroup_->procs_files();
  const bool offline = policy_.network == protocol::NetworkMode::none;
  if (!settings_.sandbox) {
    if (offline)
      return fail(errc::kSandboxFailed,
                  "the Run asks for network: none, which only the sandbox can enforce, and "
                  "sandbox.mode is none");
    notice("warning: sandbox.mode is none: tofu and its providers run with the agent's own "
           "rights and can read its keys, tokens and other Runs' workspaces");
    spdlog::warn("run {}: running unsandboxed (sandbox.mode: none)", manifest_.run_id);
    return options;
  }
  options.sandbox = *settings_.sandbox;
  options.sandbox->network = options.sandbox->network && !offline;
  options.sandbox->read_only.push_back(tofu_binary_);
  // Only the providers the policy allows exist in the sandbox: a program that starts another tofu
  // (an allowed provider's exec setting, or external data where allowed) cannot reach the others.
  auto providers = visible_provider_dirs(provider_mirror_, policy_);
  if (!providers) return std::unexpected(providers.error());
  for (const auto& dir : *providers) options.sandbox->read_only.push_back(dir);
  // The supervisor's lock tells a restarted agent whether tofu still runs: the module must not be
  // able to remove or replace it. The agent directory holds what tofu reads but must not change.
  options.sandbox->protected_paths = {workspace_->root() / "capture", workspace_->credentials(),
                                      workspace_->lock_file(), workspace_->agent_dir()};
  auto confine = confine_options(options.sandbox->network, *providers);
  if (!confine) return std::unexpected(confine.error());
  options.hook_confine = hook_confine(*confine);
  options.sandbox->confine = std::move(*confine);
  return options;
}

// The exec allowlist of this Run: tofu and the providers the Run may see; the interpreters of
// sandbox.execAllow (and the dynamic loader they need) only when the policy lets the module run
// programs at all. See docs/security.md "Exec allowlist".
Result<std::optional<SandboxOptions::Confine>> RunFlow::confine_options(
    bool network, const std::vector<fs::path>& providers) const {
  if (!settings_.exec_control) return std::optional<SandboxOptions::Confine>{};
  const ExecControl& control = *settings_.exec_control;
  if (control.landlock.abi == 0) {
    if (control.required)
      return fail(errc::kSandboxFailed,
                  "sandbox.execControl is required, but " + control.landlock.unavailable +
                      "; run the agent on such a kernel or set sandbox.execControl: best-effort");
    notice("warning: the exec allowlist is not enforced (sandbox.execControl: best-effort): " +
           control.landlock.unavailable);
  }
  confine::ConfineArguments args;
  args.exec = {tofu_binary_.string()};
  for (const auto& dir : providers) args.exec.push_back(dir.string());
  if (policy_.allow_provisioners || policy_.allow_external_data) {
    for (const auto& path : control.allow) args.exec.push_back(path.string());
    args.loader = !control.allow.empty();
  }
  if (network) args.tcp_connect_ports = control.tcp_connect_ports;
  if (!settings_.cgroups) args.max_processes = settings_.max_processes;
  args.landlock_required = control.required;
  args.allow_jit = control.allow_jit;
  return std::optional<SandboxOptions::Confine>(SandboxOptions::Confine{control.confine, std::move(args)});
}

}  // namespace takosumi::runner
