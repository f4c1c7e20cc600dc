#pragma once
// The options of one Run's tofu commands — the sandbox, what it may read, the kernel exec
// allowlist, the limits — made from explicit values: what the agent's settings say and what the
// Run has (its OpenTofu, mirror, policy, workspace and cgroup). A step of the Run that starts
// nothing and can be tested alone.
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "protocol/run_policy.hpp"
#include "redaction/secret_set.hpp"
#include "runner/tofu/sandbox.hpp"
#include "runner/tofu/tofu_cli.hpp"

namespace takosumi::runner {

struct RunTofuRequest {
  // The agent's settings.
  std::optional<SandboxOptions> sandbox;     // sandbox.mode; unset: unsandboxed
  std::optional<ExecControl> exec_control;   // unset only without a sandbox
  std::vector<std::filesystem::path> hooks;  // the operator's hook programs that are set
  ProcessLimits limits;
  std::uint64_t memory_bytes = 0;     // limits.memoryMiB; 0: none
  std::uint64_t workspace_bytes = 0;  // limits.workspaceMiB; 0: none
  std::uint64_t max_processes = 0;    // limits.maxProcesses, held by RLIMIT_NPROC without a cgroup
  std::chrono::milliseconds kill_grace{std::chrono::seconds(30)};
  std::optional<std::filesystem::path> supervisor;
  std::uint64_t max_show_json = 64u << 20;
  // The Run's.
  std::filesystem::path binary;           // the chosen OpenTofu (runner/tofu/tofu_choice.hpp)
  std::filesystem::path provider_mirror;  // the mirror or the verified copy of the pinned packages
  std::chrono::steady_clock::time_point deadline;
  protocol::RunPolicy policy;  // the pool's and the manifest's, combined
  std::filesystem::path workspace_root;
  std::filesystem::path lock_file;  // the supervisor's, in the agent's directory
  // What the module must not remove or replace: the capture, the credentials, the lock, the
  // agent's directory of the workspace.
  std::vector<std::filesystem::path> protected_paths;
  // The Run's cgroup, when the agent made one: its procs files, and whether it holds the memory.
  std::optional<std::vector<std::filesystem::path>> cgroup_procs;
  bool cgroup_memory = false;
  bool cgroups_managed = false;  // the agent manages cgroups at all (limits.maxProcesses is the cgroup's)
  boost::asio::thread_pool* blocking = nullptr;
  const redaction::SecretSet* secrets = nullptr;
};

struct RunTofu {
  TofuOptions options;
  std::vector<std::string> warnings;  // for the Run's log ("warning: …")
};

// sandbox_failed for a Run that asks for network: none without a sandbox, or an exec allowlist
// that is required where the kernel has no Landlock.
Result<RunTofu> run_tofu_options(const RunTofuRequest& request);

}  // namespace takosumi::runner
