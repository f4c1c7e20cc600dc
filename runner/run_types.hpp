#pragma once
// What one Run attempt is given and what it gives back: the runner's settings (the same for every
// Run of an agent), a Run's inputs and its outcome. Shared by RunExecutor and RunFlow.
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/secret_bytes.hpp"
#include "config/state_limit.hpp"
#include "protocol/job_manifest.hpp"
#include "protocol/run_policy.hpp"
#include "protocol/run_report.hpp"
#include "protocol/secret_bundle.hpp"
#include "redaction/secret_set.hpp"
#include "runner/source/git_source.hpp"
#include "runner/tofu/run_cgroups.hpp"
#include "runner/tofu/process_launcher.hpp"
#include "runner/tofu/sandbox.hpp"
#include "config/service_settings.hpp"
#include "runner/tofu/tofu_version_cache.hpp"
#include "runner/policy/package_hash.hpp"

namespace takosumi::runner {

struct RunnerSettings {
  std::filesystem::path tofu_binary;
  std::filesystem::path provider_mirror;
  std::filesystem::path work_root;  // per-run workspaces; prefer tmpfs
  SourceAccess source;  // the git cache, the file roots, how sources are fetched
  std::chrono::seconds tofu_timeout{1800};  // wall clock for all tofu commands of one Run
  std::chrono::seconds kill_grace{30};      // after SIGINT, before SIGKILL
  // Resource type globs whose delete or replace is marked data_loss on plans and destroy plans;
  // empty means default_data_loss_patterns() (runner/plan/data_loss.hpp).
  std::vector<std::string> data_loss_patterns;
  // Every tofu command runs in this sandbox; the tofu binary and the mirror are added read-only,
  // the network follows the Run's effective policy. Unset: unsandboxed, with a warning per Run.
  std::optional<SandboxOptions> sandbox;
  // Inside the sandbox: Landlock exec allowlist, seccomp, RLIMIT_NPROC (takosumi-confine). Unset
  // only without a sandbox.
  std::optional<ExecControl> exec_control;
  ProcessLimits limits;        // of tofu and each plugin
  // Tasks (processes and threads) of one Run together (limits.maxProcesses); 0: no limit. Held by
  // a cgroup's pids.max when cgroups is set, else by RLIMIT_NPROC in the sandbox.
  std::uint64_t max_processes = 512;
  // Memory of one Run (limits.memoryMiB); 0: no limit. Held by the Run cgroup's memory.max when
  // cgroups limit memory, else by RLIMIT_AS of each process.
  std::uint64_t memory_bytes = 0;
  // The Run's workspace (limits.workspaceMiB); 0: no limit. RLIMIT_FSIZE of each process, and the
  // workspace's total measured while each command runs.
  std::uint64_t workspace_bytes = 0;
  std::optional<RunCgroups> cgroups;
  protocol::RunPolicy policy;  // the pool's side, combined with the manifest's
  std::uint64_t max_log_bytes = 16u << 20;
  std::uint64_t max_plan_json_bytes = 64u << 20;
  std::uint64_t max_state_bytes = config::kDefaultMaxStateBytes;
  // Every tofu command runs under this supervisor (takosumi-supervise), so tofu is interrupted
  // (and persists its state) rather than killed when the agent dies. Unset: tofu is the agent's
  // direct child and dies with it.
  std::optional<std::filesystem::path> supervisor;
  // How often the state is checked for a new checkpoint while an apply runs.
  std::chrono::milliseconds checkpoint_interval{500};
  // The operator's executables around the tofu commands (hooks.*, runner/phases/run_hooks.hpp):
  // plan hooks surround plans, destroy plans and drift checks; apply hooks surround applies.
  config::HooksConfig hooks;
  // What `tofu version` said, shared by the agent's Runs; unset: asked on every Run.
  std::shared_ptr<TofuVersionCache> tofu_versions;
  // More builds, one per version (runner/tofu/tofu_builds.hpp); empty: tofu_binary only.
  std::filesystem::path tofu_versions_dir;
  // When set, the mirror is checked against these pins before the Run's tofu starts, and a package
  // that does not match fails the Run with provider_checksum_mismatch (runner/policy/mirror_verify).
  std::filesystem::path provider_pins;
  std::shared_ptr<PackageHashCache> package_hashes;
  // With provider_pins: where the agent keeps its verified copies of the pinned packages, which
  // the Run's tofu then uses instead of the mirror (runner/policy/verified_mirror.hpp). Empty:
  // the mirror itself is used after the check.
  std::filesystem::path verified_mirror_store;
  // Where verified results of `tofu init` are kept for Runs of the same configuration
  // (runner/phases/init_cache.hpp); empty: every Run runs init. Never a path a Run can write.
  std::filesystem::path init_cache_dir;
};

struct RunInputs {
  protocol::JobManifest manifest;
  // Where this Run's encrypted artifacts (plan, state, checkpoints) go for the caller to upload;
  // outside every workspace. The agent gives each attempt its own spool directory.
  std::filesystem::path outbox;
  std::optional<std::filesystem::path> prior_state_envelope;
  SecretBytes prior_state_dek;
  std::optional<std::filesystem::path> plan_envelope;
  SecretBytes plan_dek;
  // An offline Run bundle's source (manifest.source.pack_sha256): a Git pack file checked out
  // instead of fetching (runner/source/git_source.hpp).
  std::optional<std::filesystem::path> source_pack;
  // The opened "secrets" of the manifest: Connections and sensitive variables.
  protocol::SecretBundle secrets;
  // Every value the Run must never let out. The caller may share it (the agent redacts its own
  // logs with it); the Run adds the bundle's values and every sensitive value it meets in the
  // prior state, the plan and the outputs. Created by async_run when null.
  std::shared_ptr<redaction::SecretSet> secret_set;
  // Awaited right before `tofu apply` starts, when everything else is ready. An error stops the
  // Run there with that error and nothing is applied: the agent uses it to record the phase and to
  // tell the control plane first, which refuses a stale lease (fencing).
  std::function<boost::asio::awaitable<Status>()> before_apply;
};

struct RunOutcome {
  // status, failure, changes, data_loss (plan, destroy_plan), drift (drift_check only, also on
  // failure as status "error"), digests, new_state, outputs (apply success only), provider lock
  // digest, source commit, tofu version, env names, phase timings. lease_token and attempt are left
  // empty for the caller.
  protocol::RunReport report;
  std::optional<std::filesystem::path> plan_envelope;   // upload as "plan"
  std::optional<std::filesystem::path> plan_view;       // upload as "plan_view" (redacted JSON)
  std::optional<std::filesystem::path> state_envelope;  // upload as "state"; may be present on
                                                        // failure (a failed apply that changed state)
  std::int64_t checkpoints = 0;  // encrypted state checkpoints taken while the apply ran
};

}  // namespace takosumi::runner
