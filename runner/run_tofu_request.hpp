#pragma once
// What a Run's tofu commands are made of (runner/tofu/run_tofu_options.hpp), from the agent's
// settings and what the Run has: its OpenTofu, mirror, policy, deadline, workspace and cgroup.
// Explicit values in, a request out; nothing is started.
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <filesystem>

#include "protocol/run_policy.hpp"
#include "redaction/secret_set.hpp"
#include "runner/run_types.hpp"
#include "runner/state/run_workspace.hpp"
#include "runner/tofu/run_cgroups.hpp"
#include "runner/tofu/run_tofu_options.hpp"

namespace takosumi::runner {

struct RunTofuParts {
  const std::filesystem::path& binary;  // the chosen OpenTofu
  const std::filesystem::path& mirror;  // the mirror, or the verified copy of the pinned packages
  std::chrono::steady_clock::time_point deadline;
  const protocol::RunPolicy& policy;  // the pool's and the manifest's, combined
  const RunWorkspace& workspace;
  const RunCgroup* cgroup;  // the Run's, when the agent made one
  boost::asio::thread_pool& blocking;
  const redaction::SecretSet& secrets;
};

RunTofuRequest run_tofu_request(const RunnerSettings& settings, const RunTofuParts& run);

}  // namespace takosumi::runner
