#include "runner/state/new_state.hpp"

#include <string>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/state/state_document.hpp"

namespace takosumi::runner {

namespace fs = std::filesystem;

std::optional<fs::path> new_state_file(const fs::path& module_dir) {
  for (const char* name : {kErroredStateFile, kStateFile})
    if (fs::path state = module_dir / name; fs::exists(fs::symlink_status(state))) return state;
  return std::nullopt;
}

Status seal_new_state(const RunWorkspace& workspace, const fs::path& state, const fs::path& outbox,
                      const protocol::JobManifest& manifest, std::uint64_t max_state_bytes,
                      redaction::SecretSet& secrets, NewState& out) {
  if (auto ok = workspace.check_regular_file(state); !ok)
    return std::unexpected(protocol::as_run_failure(ok.error(), errc::kStateIntegrityFailed));
  std::error_code size_ec;
  const auto state_bytes = fs::file_size(state, size_ec);
  auto doc = read_state_document(state, "the new state", state_read_limit(max_state_bytes), secrets);
  if (!doc) return std::unexpected(protocol::as_run_failure(doc.error(), errc::kStateIntegrityFailed));
  auto identity = state_identity(*doc);
  if (!identity) return std::unexpected(protocol::as_run_failure(identity.error(), errc::kStateIntegrityFailed));
  out.found = true;
  out.outputs = state_outputs(*doc);
  out.identity = std::move(*identity);
  const auto& prior = manifest.prior_state;
  if (prior && prior->serial == out.identity.serial && prior->lineage == out.identity.lineage)
    return {};  // unchanged: no new StateVersion
  auto sealed = seal_state(state, outbox, manifest, out.identity);
  if (!sealed) return std::unexpected(sealed.error());
  out.sealed = std::move(*sealed);
  // Checked after sealing: the state is kept and uploaded; the Run still fails so the operator
  // sees the limit.
  if (!size_ec && state_bytes > max_state_bytes)
    return fail(errc::kLimitExceeded,
                "the new state is " + std::to_string(state_bytes) + " bytes, more than "
                "limits.maxStateBytes (" + std::to_string(max_state_bytes) +
                "); it was stored, but raise the limit or split the Capsule");
  return {};
}

}  // namespace takosumi::runner
