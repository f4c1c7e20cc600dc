#pragma once
// What this host offers the Run sandbox, probed once at start (and by --check-config): the
// Landlock ABI for the exec allowlist, a pids cgroup for limits.maxProcesses, and whether the tofu
// binary can run under the allowlist at all (it must be statically linked).
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/agent_config.hpp"
#include "confine/landlock.hpp"
#include "runner/host.hpp"

namespace takosumi::agent {

struct SandboxProbe {
  confine::LandlockSupport landlock;
  std::optional<runner::RunCgroups> cgroups;
  std::string cgroups_unavailable;  // why there is none
};

// prepare: may set up the cgroup parent (the daemon); --check-config changes nothing.
SandboxProbe probe_sandbox(const config::AgentConfig& config, bool prepare);

// One line each: exec allowlist, process limit, /tmp; for --check-config and the start log.
std::vector<std::string> describe_sandbox(const SandboxProbe& probe, const config::AgentConfig& config);

// config_invalid when the exec allowlist would be enforced (sandbox on, Landlock present or
// required) and tofu.binary is dynamically linked, which it could then never start.
Status check_tofu_binary(const SandboxProbe& probe, const config::AgentConfig& config);

// The builds of tofu.versionsDir, one line for what there is and one per entry skipped or
// unusable under the exec allowlist; nothing without a versionsDir. config_invalid when the
// directory cannot be listed.
Result<std::vector<std::string>> describe_tofu_builds(const SandboxProbe& probe,
                                                      const config::AgentConfig& config);

}  // namespace takosumi::agent
