#pragma once
// Starts one empty sandbox with the namespaces and mounts a Run's commands get (runner/tofu/
// sandbox.hpp; without the exec allowlist and limits) and runs /usr/bin/true in it: at start and in --check-config (the unit's ExecStartPre), so a host or
// a service manager that keeps bubblewrap from building its namespaces and its /proc (a
// RestrictNamespaces=, ProtectKernelTunables= or ProtectProc= added to the unit, user namespaces
// switched off) is found before the agent takes work, not by every Run failing sandbox_failed.
#include "common/error.hpp"
#include "config/agent_config.hpp"

namespace takosumi::agent {

// sandbox_failed with bubblewrap's own complaint and what usually causes it; nothing when the
// sandbox is off (sandbox.mode: none).
Status check_bubblewrap(const config::AgentConfig& config);

}  // namespace takosumi::agent
