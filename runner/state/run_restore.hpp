#pragma once
// A Run's encrypted inputs opened before any of its tofu starts, as one step of explicit values:
// the prior StateVersion into the module directory, and for an apply the approved plan into the
// workspace. Every sensitive value either holds joins the Run's secrets, so it is redacted from
// the first line tofu prints.
#include <filesystem>
#include <optional>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "protocol/job_manifest.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::runner {

struct SealedInputs {
  std::optional<std::filesystem::path> prior_state;  // envelope, when the manifest names one
  const SecretBytes* prior_state_dek = nullptr;
  std::optional<std::filesystem::path> plan;         // envelope, for an apply
  const SecretBytes* plan_dek = nullptr;
};

struct InputsOpenedAt {
  std::filesystem::path state_file;     // <module dir>/terraform.tfstate
  std::filesystem::path plan_contents;  // scratch file of the workspace
  std::filesystem::path frozen_plan;    // the plan file an apply runs
};

// Returns whether the plan's sensitive values came out of the sealed plan (false: none sealed
// with it, a plan of an older agent; the apply asks `tofu show` then). Errors as
// restore_prior_state and restore_saved_plan (runner/state/run_artifacts.hpp); a prior state that
// does not read as one is state_integrity_failed. Blocking.
Result<bool> open_sealed_inputs(const SealedInputs& sealed, const protocol::JobManifest& manifest,
                                const InputsOpenedAt& at, std::uint64_t max_state_bytes,
                                redaction::SecretSet& secrets);

}  // namespace takosumi::runner
