#include "agent/service/sandbox_probe.hpp"

#include <unistd.h>

#include "common/error_codes.hpp"
#include "crypto/sha256.hpp"
#include "confine/elf_interpreter.hpp"
#include "runner/host.hpp"

namespace takosumi::agent {

SandboxProbe probe_sandbox(const config::AgentConfig& config, bool prepare) {
  SandboxProbe probe;
  probe.landlock = confine::probe_landlock();
  // One agent installation, one state directory: its Run cgroups are its own.
  const auto instance = crypto::sha256_hex(std::filesystem::absolute(config.state_dir).string()).substr(0, 16);
  auto cgroups = runner::RunCgroups::open(prepare, "agent-" + instance);
  if (cgroups) {
    probe.cgroups.emplace(std::move(*cgroups));
    if (prepare) probe.cgroups->remove_stale();
  } else {
    probe.cgroups_unavailable = cgroups.error().message;
  }
  return probe;
}

std::vector<std::string> describe_sandbox(const SandboxProbe& probe, const config::AgentConfig& c) {
  if (!c.sandbox.enabled) return {"sandbox: none (sandbox.mode: none)"};
  std::vector<std::string> out;
  const auto& ll = probe.landlock;
  out.push_back(ll.abi > 0 ? "exec allowlist: Landlock ABI " + std::to_string(ll.abi) + " (" +
                                 confine::describe_landlock(ll.abi, c.sandbox.tcp_connect_ports.has_value()) + ")"
                           : "exec allowlist: unavailable: " + ll.unavailable +
                                 (c.sandbox.exec_control_required ? "; Runs fail (sandbox.execControl: required)"
                                                                  : "; Runs warn (sandbox.execControl: best-effort)"));
  const auto n = std::to_string(c.limits.max_processes);
  if (c.limits.max_processes == 0)
    out.emplace_back("process limit: none (limits.maxProcesses: 0)");
  else if (probe.cgroups)
    out.push_back("process limit: " + n + " tasks per Run, pids.max in " + probe.cgroups->describe());
  else if (::geteuid() != 0)
    out.push_back("process limit: " + n + " tasks per Run, RLIMIT_NPROC in each Run's user namespace (" +
                  probe.cgroups_unavailable + ")");
  else
    out.push_back("process limit: NOT ENFORCED: the agent runs as root without a pids cgroup (" +
                  probe.cgroups_unavailable + ")");
  const auto memory = std::to_string(c.limits.memory_mib) + " MiB per Run";
  if (c.limits.memory_mib == 0)
    out.emplace_back("memory limit: none (limits.memoryMiB: 0)");
  else if (probe.cgroups && probe.cgroups->limits_memory())
    out.push_back("memory limit: " + memory + ", memory.max of the Run's cgroup");
  else
    out.push_back("memory limit: " + memory + " per process, RLIMIT_AS (no memory cgroup to manage: " +
                  (probe.cgroups ? std::string("the memory controller is not delegated") : probe.cgroups_unavailable) + ")");
  out.push_back(c.limits.workspace_mib == 0
                    ? std::string("workspace limit: none (limits.workspaceMiB: 0)")
                    : "workspace limit: " + std::to_string(c.limits.workspace_mib) + " MiB per Run");
  out.push_back("private /tmp: " + std::to_string(c.limits.tmp_mib) + " MiB per Run");
  return out;
}

Result<std::vector<std::string>> describe_tofu_builds(const SandboxProbe& probe,
                                                      const config::AgentConfig& c) {
  std::vector<std::string> out;
  if (c.tofu_versions_dir.empty()) return out;
  auto list = runner::list_tofu_builds(c.tofu_versions_dir);
  if (!list) return fail(errc::kConfigInvalid, list.error().message);
  out.push_back("OpenTofu builds (tofu.versionsDir, for Runs with a version constraint): " +
                runner::list_names(*list));
  for (const auto& skipped : list->skipped) out.push_back("tofu.versionsDir: skipped " + skipped);
  const bool enforced = c.sandbox.enabled && (probe.landlock.abi != 0 || c.sandbox.exec_control_required);
  for (const auto& b : list->builds) {
    if (!enforced) break;
    auto interpreter = confine::elf_interpreter(b.binary.string());
    if (!interpreter || *interpreter)
      out.push_back("tofu.versionsDir: build " + b.name +
                    " cannot run under the exec allowlist (dynamically linked or not ELF): Runs "
                    "that choose it fail");
  }
  return out;
}

Status check_tofu_binary(const SandboxProbe& probe, const config::AgentConfig& c) {
  if (!c.sandbox.enabled || (probe.landlock.abi == 0 && !c.sandbox.exec_control_required)) return {};
  auto interpreter = confine::elf_interpreter(c.tofu_binary.string());
  if (!interpreter) return fail(errc::kConfigInvalid, "tofu.binary: " + interpreter.error());
  if (*interpreter)
    return fail(errc::kConfigInvalid,
                "tofu.binary " + c.tofu_binary.string() + " is dynamically linked (it needs " +
                    **interpreter + "); the exec allowlist never grants the dynamic loader to tofu: "
                    "use a statically linked build (CGO_ENABLED=0, as OpenTofu's releases are)");
  return {};
}

}  // namespace takosumi::agent
