#pragma once
// The runner's settings for this agent's Runs, from its configuration and what the sandbox probe
// found on the host: one definition for the daemon's Runs and the offline Runs of
// `run-bundle execute`. The caches (tofu versions, package hashes) are the caller's to add.
#include "agent/service/sandbox_probe.hpp"
#include "config/agent_config.hpp"
#include "runner/run_types.hpp"

namespace takosumi::agent {

runner::RunnerSettings make_runner_settings(const config::AgentConfig& config,
                                            const SandboxProbe& probe);

}  // namespace takosumi::agent
