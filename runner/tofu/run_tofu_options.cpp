#include "runner/tofu/run_tofu_options.hpp"

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "runner/policy/mirror_view.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

// The exec allowlist of the Run: tofu and the providers the Run may see; the interpreters of
// sandbox.execAllow (and the dynamic loader they need) only when the policy lets the module run
// programs at all. See docs/security.md "Exec allowlist".
Result<std::optional<SandboxOptions::Confine>> confine_options(const RunTofuRequest& r, bool network,
                                                               const std::vector<fs::path>& providers,
                                                               std::vector<std::string>& warnings) {
  if (!r.exec_control) return std::optional<SandboxOptions::Confine>{};
  const ExecControl& control = *r.exec_control;
  if (control.landlock.abi == 0) {
    if (control.required)
      return fail(errc::kSandboxFailed,
                  "sandbox.execControl is required, but " + control.landlock.unavailable +
                      "; run the agent on such a kernel or set sandbox.execControl: best-effort");
    warnings.push_back("warning: the exec allowlist is not enforced (sandbox.execControl: best-effort): " +
                       control.landlock.unavailable);
  }
  confine::ConfineArguments args;
  args.exec = {r.binary.string()};
  for (const auto& dir : providers) args.exec.push_back(dir.string());
  if (r.policy.allow_provisioners || r.policy.allow_external_data) {
    for (const auto& path : control.allow) args.exec.push_back(path.string());
    args.loader = !control.allow.empty();
  }
  if (network) args.tcp_connect_ports = control.tcp_connect_ports;
  if (!r.cgroups_managed) args.max_processes = r.max_processes;
  args.landlock_required = control.required;
  args.allow_jit = control.allow_jit;
  return std::optional<SandboxOptions::Confine>(SandboxOptions::Confine{control.confine, std::move(args)});
}

// What a hook's sandbox may execute: the hooks themselves and sandbox.execAllow (the shell and
// the programs a hook script starts), with the dynamic loader, whatever the Run's policy says
// about the module's own programs: the hooks are the operator's.
std::optional<SandboxOptions::Confine> hook_confine(const RunTofuRequest& r,
                                                    const std::optional<SandboxOptions::Confine>& tofu) {
  if (!tofu) return std::nullopt;
  SandboxOptions::Confine confine = *tofu;
  confine.arguments.exec.clear();
  for (const auto& path : r.hooks) confine.arguments.exec.push_back(path.string());
  for (const auto& path : r.exec_control->allow) confine.arguments.exec.push_back(path.string());
  confine.arguments.loader = true;
  return confine;
}

}  // namespace

Result<RunTofu> run_tofu_options(const RunTofuRequest& r) {
  RunTofu out{TofuOptions{r.binary, r.provider_mirror, r.deadline, r.kill_grace}, {}};
  TofuOptions& options = out.options;
  options.limits = r.limits;
  // A Run's memory is its cgroup's when the agent manages one with memory; else each process's.
  if (r.memory_bytes > 0 && !r.cgroup_memory) options.limits.address_space_bytes = r.memory_bytes;
  if (r.workspace_bytes > 0) {
    options.limits.file_size_bytes = r.workspace_bytes;
    options.workspace_budget = DiskBudget{r.workspace_root, r.workspace_bytes};
  }
  options.blocking = r.blocking;
  options.max_show_json = r.max_show_json;
  options.secrets = r.secrets;
  options.supervisor = r.supervisor;
  options.lock_file = r.lock_file;
  if (r.cgroup_procs) options.cgroup_procs = *r.cgroup_procs;
  const bool offline = r.policy.network == protocol::NetworkMode::none;
  if (!r.sandbox) {
    if (offline)
      return fail(errc::kSandboxFailed,
                  "the Run asks for network: none, which only the sandbox can enforce, and "
                  "sandbox.mode is none");
    out.warnings.push_back("warning: sandbox.mode is none: tofu and its providers run with the "
                           "agent's own rights and can read its keys, tokens and other Runs' "
                           "workspaces");
    return out;
  }
  options.sandbox = *r.sandbox;
  options.sandbox->network = options.sandbox->network && !offline;
  options.sandbox->read_only.push_back(r.binary);
  // Only the providers the policy allows exist in the sandbox: a program that starts another tofu
  // (an allowed provider's exec setting, or external data where allowed) cannot reach the others.
  auto providers = visible_provider_dirs(r.provider_mirror, r.policy);
  if (!providers) return std::unexpected(providers.error());
  for (const auto& dir : *providers) options.sandbox->read_only.push_back(dir);
  // The supervisor's lock tells a restarted agent whether tofu still runs: the module must not be
  // able to remove or replace it. The agent directory holds what tofu reads but must not change.
  options.sandbox->protected_paths = r.protected_paths;
  auto confine = confine_options(r, options.sandbox->network, *providers, out.warnings);
  if (!confine) return std::unexpected(confine.error());
  options.hook_confine = hook_confine(r, *confine);
  options.sandbox->confine = std::move(*confine);
  return out;
}

}  // namespace takosumi::runner
