#pragma once
// What a SIGHUP may change in a running agent. The settings each Run copies when it starts (log
// level, concurrency, labels, timeouts, limits, policy, sandbox rules, hooks) take the new file's
// values; the ones the process is built around (its identity, control plane, directories, the
// binaries it probed at start) keep the running values and are named, so the operator learns
// that they need a restart.
#include <string>
#include <vector>

#include "config/agent_config.hpp"

namespace takosumi::config {

// Moves the reloadable settings of `fresh` into `running`; returns the keys whose new value waits
// for a restart (empty when none changed).
std::vector<std::string> apply_reload(AgentConfig& running, AgentConfig fresh);

}  // namespace takosumi::config
