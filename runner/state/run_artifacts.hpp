#pragma once
// The encrypted artifacts of a Run (crypto/envelope.hpp): the prior StateVersion and the saved
// plan it reads, the plan and the new state it writes for the control plane. All blocking (file
// crypto and hashing): call on the thread pool.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "protocol/job_manifest.hpp"
#include "runner/state/state_file.hpp"

namespace takosumi::runner {

struct SealedArtifact {
  std::filesystem::path path;    // in the outbox, 0600
  std::string artifact_sha256;   // of the envelope file
  std::string plaintext_sha256;  // of what it holds
};

// Decrypts the manifest's prior StateVersion into out, insisting on kind "state", this Capsule,
// the manifest's generation and plaintext digest. Errors: state_integrity_failed (the message
// keeps the envelope's own code), workspace_failed (local I/O).
Status restore_prior_state(const std::filesystem::path& envelope, const SecretBytes& dek,
                           const protocol::JobManifest& manifest, const std::filesystem::path& out);

// Decrypts the saved plan (kind "plan", this Capsule) into the scratch file `contents`, checks
// sha256 of the plaintext against manifest.saved_plan->digest, and splits it (plan_contents.hpp):
// the plan file to plan_out, and the sensitive values the plan Run sealed with it (nullopt for a
// plan sealed by an older agent). Errors: state_integrity_failed (envelope or layout unusable),
// plan_digest_mismatch (a valid plan, but not the one approved; nothing is left), workspace_failed.
Result<std::optional<std::vector<SecretBytes>>> restore_saved_plan(
    const std::filesystem::path& envelope, const SecretBytes& dek,
    const protocol::JobManifest& manifest, const std::filesystem::path& contents,
    const std::filesystem::path& plan_out);

// Seals the plan file with the sensitive values `tofu show -json` of it named (written to the
// scratch file `contents` first, removed after) to <outbox>/<run_id>-<attempt>.plan.env for the
// control plane's key: header generation = prior generation (or 0), lineage/serial of the prior
// state if any. The plan's digest is that of the whole contents.
Result<SealedArtifact> seal_plan(const std::filesystem::path& plan_file,
                                 const std::vector<SecretBytes>& sensitive_values,
                                 const std::filesystem::path& contents,
                                 const std::filesystem::path& outbox,
                                 const protocol::JobManifest& manifest);

// Encrypts the state file to <outbox>/<run_id>-<attempt>.state.env: header generation = prior
// generation + 1, with the state's own lineage and serial.
Result<SealedArtifact> seal_state(const std::filesystem::path& state_file,
                                  const std::filesystem::path& outbox,
                                  const protocol::JobManifest& manifest,
                                  const StateIdentity& identity);

// The same envelope as seal_state, to <outbox>/<run_id>-<attempt>.checkpoint.env: a copy of the
// state taken while the apply still runs (runner/state/state_checkpoint.hpp).
Result<SealedArtifact> seal_state_checkpoint(const std::filesystem::path& state_file,
                                             const std::filesystem::path& outbox,
                                             const protocol::JobManifest& manifest,
                                             const StateIdentity& identity);

// Where seal_state and seal_state_checkpoint put their envelopes for this Run attempt.
std::filesystem::path sealed_state_path(const std::filesystem::path& outbox,
                                        const protocol::JobManifest& manifest);
std::filesystem::path checkpoint_path(const std::filesystem::path& outbox,
                                      const protocol::JobManifest& manifest);

// An envelope sealed earlier (by this agent, possibly before a restart): its digests and the
// state identity its header names, without decrypting it. Errors: state_integrity_failed.
struct SealedState {
  SealedArtifact artifact;
  StateIdentity identity;
};
Result<SealedState> describe_sealed_state(const std::filesystem::path& envelope);

}  // namespace takosumi::runner
