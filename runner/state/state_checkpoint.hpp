#pragma once
// Encrypted copies of the state while `tofu apply` runs, and the recovery of the newest state a
// Run attempt left behind when the agent stopped in the middle of it (docs/operations.md).
//
// tofu rewrites terraform.tfstate in the workspace each time it finishes a resource. Each new
// serial is copied within the workspace, checked to be a whole version 4 state (tofu may be
// mid-write), sealed to the control plane's key exactly like a StateVersion and put in the Run's
// spool, replacing the previous checkpoint. The spool lives in the agent's persistent state
// directory, so a checkpoint survives a reboot that wipes the tmpfs workspace; plaintext never
// leaves the workspace. All blocking: call on the thread pool.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "protocol/job_manifest.hpp"
#include "runner/state/run_artifacts.hpp"
#include "runner/state/run_workspace.hpp"
#include "runner/state/state_file.hpp"

namespace takosumi::runner {

class StateCheckpointer {
 public:
  // The plaintext copy goes to the workspace's capture directory, which the sandboxed module
  // cannot write (it could plant links there otherwise); it is removed after each checkpoint.
  // max_state_bytes is limits.maxStateBytes; a state past state_read_limit() is no checkpoint.
  StateCheckpointer(const RunWorkspace& workspace, std::filesystem::path state_file,
                    std::filesystem::path outbox, const protocol::JobManifest& manifest,
                    std::uint64_t max_state_bytes);

  // True when a new checkpoint was sealed. A missing state, one that is not whole yet, or one
  // that equals the prior state or the last checkpoint is no checkpoint (false); only local I/O
  // or sealing trouble is an error.
  Result<bool> checkpoint();
  std::int64_t count() const { return count_; }

 private:
  const RunWorkspace& workspace_;
  std::filesystem::path state_file_;
  std::filesystem::path scratch_;
  std::filesystem::path outbox_;
  const protocol::JobManifest& manifest_;
  std::uint64_t read_limit_;
  std::filesystem::file_time_type last_mtime_{};
  std::uintmax_t last_size_ = 0;
  std::optional<StateIdentity> last_;
  std::int64_t count_ = 0;
};

struct RecoveredState {
  SealedState sealed;   // the Run attempt's "state" artifact in the outbox
  std::string source;   // where it came from, for the operator: a file name or "checkpoint"
};

// The newest state of an interrupted Run attempt, sealed as its state artifact: errored.tfstate
// or terraform.tfstate from the workspace when it survived and holds a whole state, otherwise the
// newest checkpoint. nullopt when there is neither, or when it is the prior state unchanged (the
// apply changed nothing that tofu persisted). max_state_bytes is limits.maxStateBytes.
Result<std::optional<RecoveredState>> recover_newest_state(const std::filesystem::path& work_root,
                                                           const std::filesystem::path& outbox,
                                                           const protocol::JobManifest& manifest,
                                                           std::uint64_t max_state_bytes);

}  // namespace takosumi::runner
