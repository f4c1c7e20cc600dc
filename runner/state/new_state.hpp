#pragma once
// The end of an apply, as explicit values: the state file tofu left in the module directory, read
// once and sealed as the Run's new StateVersion (unless it is the prior state unchanged).
#include <cstdint>
#include <filesystem>
#include <optional>

#include <boost/json/object.hpp>

#include "common/error.hpp"
#include "protocol/job_manifest.hpp"
#include "redaction/secret_set.hpp"
#include "runner/state/run_artifacts.hpp"
#include "runner/state/run_workspace.hpp"
#include "runner/state/state_file.hpp"

namespace takosumi::runner {

struct NewState {
  bool found = false;            // the state file was read
  StateIdentity identity;
  boost::json::object outputs;   // `tofu output -json`'s shape (state_outputs)
  std::optional<SealedArtifact> sealed;  // none when the prior state is unchanged
};

// The state file an apply left in module_dir: errored.tfstate (tofu could not persist its final
// state), else terraform.tfstate; none when tofu wrote neither.
std::optional<std::filesystem::path> new_state_file(const std::filesystem::path& module_dir);

// Reads that file, as a regular file of the workspace only (the module can write there); its
// values join secrets (the apply may have made passwords and keys); then seals it to the outbox
// unless serial and lineage are the prior state's. A state past max_state_bytes is sealed all the
// same (what the apply did must not be forgotten) and then fails limit_exceeded;
// state_integrity_failed when it is not a state. Blocking.
Status seal_new_state(const RunWorkspace& workspace, const std::filesystem::path& state,
                      const std::filesystem::path& outbox, const protocol::JobManifest& manifest,
                      std::uint64_t max_state_bytes, redaction::SecretSet& secrets, NewState& out);

}  // namespace takosumi::runner
