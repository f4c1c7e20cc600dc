#include "runner/state/run_restore.hpp"

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/state/run_artifacts.hpp"
#include "runner/state/state_document.hpp"
#include "runner/state/state_file.hpp"

namespace takosumi::runner {

Result<bool> open_sealed_inputs(const SealedInputs& sealed, const protocol::JobManifest& manifest,
                                const InputsOpenedAt& at, std::uint64_t max_state_bytes,
                                redaction::SecretSet& secrets) {
  if (manifest.prior_state) {
    TAKOSUMI_TRY(restore_prior_state(*sealed.prior_state, *sealed.prior_state_dek, manifest, at.state_file));
    // The prior state's sensitive values may show up in this Run's output (an error message
    // quoting an attribute): they are redacted like the Run's own secrets.
    auto collected = read_state_document(at.state_file, "the prior state", state_read_limit(max_state_bytes),
                                         secrets);
    if (!collected)
      return std::unexpected(protocol::as_run_failure(collected.error(), errc::kStateIntegrityFailed));
  }
  if (manifest.type != protocol::RunType::apply) return false;
  auto restored = restore_saved_plan(*sealed.plan, *sealed.plan_dek, manifest, at.plan_contents, at.frozen_plan);
  if (!restored) return std::unexpected(restored.error());
  if (!*restored) return false;
  for (const auto& value : **restored) secrets.add(value.reveal_as_string());
  return true;
}

}  // namespace takosumi::runner
