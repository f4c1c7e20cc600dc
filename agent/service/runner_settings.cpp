#include "agent/service/runner_settings.hpp"

#include <algorithm>

namespace takosumi::agent {

runner::RunnerSettings make_runner_settings(const config::AgentConfig& config,
                                             const SandboxProbe& probe) {
  runner::RunnerSettings settings;
  settings.tofu_binary = config.tofu_binary;
  settings.tofu_versions_dir = config.tofu_versions_dir;
  settings.provider_mirror = config.provider_mirror;
  settings.provider_pins = config.provider_pins;
  if (!config.provider_pins.empty()) settings.verified_mirror_store = config.state_dir / "verified-mirror";
  settings.work_root = config.work_dir;
  settings.source.git_cache = config.state_dir / "git-cache";
  // A Run's source is never one of the agent's own directories, whatever a root holds.
  settings.source.rules = protocol::SourceRules{config.source.file_roots, {config.state_dir, config.work_dir},
                                                config.source.allow_loopback_hosts, "source"};
  settings.source.fetch.helper = "/proc/self/exe";
  settings.source.fetch.timeout = config.source.fetch_timeout;
  settings.source.fetch.max_bytes = config.source.max_fetch_mib << 20;
  settings.source.fetch.ca_file = config.source.ca_file;
  settings.source.max_bytes = config.limits.workspace_mib << 20;
  if (!config.supervisor_disabled) settings.supervisor = config.supervisor;
  settings.kill_grace = config.interrupt_grace;
  settings.tofu_timeout = config.tofu_timeout;
  settings.data_loss_patterns = config.data_loss_patterns;
  const auto& sandbox = config.sandbox;
  if (sandbox.enabled) {
    settings.sandbox = runner::SandboxOptions{sandbox.bubblewrap, sandbox.network, {},
                                              sandbox.writable_paths};
    settings.sandbox->tmp_bytes = config.limits.tmp_mib << 20;
    settings.exec_control = runner::ExecControl{sandbox.confine, sandbox.exec_control_required,
                                                probe.landlock, sandbox.exec_allow,
                                                sandbox.tcp_connect_ports, sandbox.allow_jit};
    // What init made, for Runs of the same configuration: only where no Run can write it (never
    // unsandboxed, never beneath a path the operator made writable in the sandbox).
    const auto cache = config.state_dir / "init-cache";
    const bool reachable = std::any_of(sandbox.writable_paths.begin(), sandbox.writable_paths.end(), [&](const auto& p) {
      const auto rel = cache.lexically_normal().lexically_relative(p.lexically_normal());
      return !rel.empty() && *rel.begin() != "..";
    });
    if (!reachable) settings.init_cache_dir = cache;
  }
  settings.memory_bytes = config.limits.memory_mib << 20;
  settings.workspace_bytes = config.limits.workspace_mib << 20;
  if (config.limits.cpu_seconds > 0) settings.limits.cpu_seconds = config.limits.cpu_seconds;
  settings.max_processes = config.limits.max_processes;
  settings.cgroups = probe.cgroups;
  settings.policy = config.policy;
  settings.max_log_bytes = config.limits.max_log_bytes;
  settings.max_plan_json_bytes = config.limits.max_plan_json_bytes;
  settings.max_state_bytes = config.limits.max_state_bytes;
  settings.hooks = config.hooks;
  return settings;
}

}  // namespace takosumi::agent
