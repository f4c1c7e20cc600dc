#pragma once
// The agent's sandbox, limits and pool policy sections (docs/configuration.md "sandbox",
// "limits", "policy"). Separate from agent_config so each loader stays one screen.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "common/error.hpp"
#include "config/state_limit.hpp"
#include "protocol/run_policy.hpp"

namespace takosumi::config {

struct SandboxConfig {
  // false only with `mode: none`, an explicit opt-in warned about on every Run.
  bool enabled = true;
  std::filesystem::path bubblewrap = "/usr/bin/bwrap";
  bool network = true;  // `network: none` takes the network away from every Run of the pool
  // Besides its workspace, what a Run may write (e.g. a directory local resources manage).
  std::vector<std::filesystem::path> writable_paths;
  // The Landlock exec allowlist: `required` fails Runs on a kernel without Landlock, `best-effort`
  // runs them with a warning in each Run's log.
  bool exec_control_required = true;
  // What may execute besides tofu and the mirror's providers when a Run's policy allows
  // provisioners or external data (files, or directories for everything beneath).
  std::vector<std::filesystem::path> exec_allow{"/bin/sh", "/usr/bin"};
  // TCP ports Runs with network may connect to; unset: any.
  std::optional<std::vector<std::uint16_t>> tcp_connect_ports;
  // takosumi-confine; empty: the one next to the takosumi-agent executable (resolved by main).
  std::filesystem::path confine;
  // Lets Runs' programs map memory writable and executable (JIT runtimes such as node or java):
  // code may then come from memory rather than from a file (docs/security.md "System calls").
  bool allow_jit = false;
};

// Every Run is bounded by default (docs/security.md "Resource limits").
inline constexpr std::int64_t kDefaultMemoryMiB = 2048;
inline constexpr std::int64_t kDefaultWorkspaceMiB = 4096;

struct LimitsConfig {
  // Memory of one Run: its whole process tree in a cgroup's memory.max where the agent may manage
  // one, else RLIMIT_AS of tofu and each plugin. 0 = no limit.
  std::uint64_t memory_mib = kDefaultMemoryMiB;
  // What one Run may keep in its workspace: RLIMIT_FSIZE per file, and the total checked while
  // each command runs. 0 = no limit.
  std::uint64_t workspace_mib = kDefaultWorkspaceMiB;
  std::uint64_t cpu_seconds = 0;  // RLIMIT_CPU of tofu and each plugin; 0 = no limit
  std::uint64_t max_log_bytes = 16u << 20;       // beyond this the Run's log is truncated
  std::uint64_t max_plan_json_bytes = 64u << 20;  // `tofu show -json` larger → limit_exceeded
  std::uint64_t max_state_bytes = kDefaultMaxStateBytes;  // a state file larger → limit_exceeded
  std::uint64_t tmp_mib = 512;                    // size of each Run's private /tmp
  std::uint64_t max_processes = 512;              // tasks of one Run together; 0 = no limit
};

Status load_sandbox(const YAML::Node& root, const std::filesystem::path& base, SandboxConfig& out);
Status load_limits(const YAML::Node& root, LimitsConfig& out);
// The pool's side of protocol::RunPolicy. Provisioners and external data default to allowed
// here, which leaves the decision to each Capsule's policy (where they default to refused).
Status load_pool_policy(const YAML::Node& root, protocol::RunPolicy& out);

}  // namespace takosumi::config
