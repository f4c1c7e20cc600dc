#include "runner/state/run_artifacts.hpp"

#include <unistd.h>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "crypto/envelope.hpp"
#include "crypto/sha256.hpp"
#include "common/failure_codes.hpp"
#include "runner/state/plan_contents.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

// Local I/O trouble is the workspace's; anything else about an envelope means it cannot be
// trusted.
Error integrity_error(const Error& e, std::string_view what) {
  if (e.code == errc::kIoError)
    return Error{std::string(errc::kWorkspaceFailed), std::string(what) + ": " + e.message};
  return Error{std::string(errc::kStateIntegrityFailed),
               std::string(what) + ": " + e.code + ": " + e.message};
}

Result<SealedArtifact> seal(const fs::path& plaintext, const fs::path& outbox,
                            const std::string& file_name, crypto::EnvelopeHeader header,
                            const protocol::JobManifest& m) {
  auto seal_error = [&](const Error& e) {
    return std::unexpected(Error{std::string(errc::kWorkspaceFailed),
                                 "seal " + file_name + ": " + e.to_string()});
  };
  auto key = crypto::BoxPublicKey::from_base64(m.control_public_key);
  if (!key) return fail(errc::kManifestInvalid, "controlPublicKey: " + key.error().message);
  if (auto made = ensure_directory(outbox, 0700); !made) return seal_error(made.error());
  header.capsule_id = m.capsule_id;
  header.run_id = m.run_id;
  header.key_id = m.control_key_id;
  const fs::path out = outbox / file_name;
  auto written = crypto::encrypt_file(plaintext, out, std::move(header), *key);
  if (!written) return seal_error(written.error());
  return SealedArtifact{out, written->sha256, written->header.plaintext_sha256};
}

// A new state belongs to the generation after the prior one, whichever file it is sealed to.
crypto::EnvelopeHeader state_header(const protocol::JobManifest& m, const StateIdentity& identity) {
  crypto::EnvelopeHeader header;
  header.kind = "state";
  header.generation = (m.prior_state ? m.prior_state->generation : 0) + 1;
  header.lineage = identity.lineage;
  header.serial = identity.serial;
  return header;
}

std::string artifact_name(const protocol::JobManifest& m, std::string_view kind) {
  return m.run_id + "-" + std::to_string(m.attempt) + "." + std::string(kind) + ".env";
}

}  // namespace

Status restore_prior_state(const fs::path& envelope, const SecretBytes& dek,
                           const protocol::JobManifest& m, const fs::path& out) {
  const auto& prior = *m.prior_state;
  crypto::EnvelopeExpectation expect{"state", m.capsule_id, prior.generation, prior.plaintext_sha256};
  auto header = crypto::decrypt_file(envelope, out, dek, expect);
  if (!header)
    return std::unexpected(integrity_error(
        header.error(), "prior StateVersion " + prior.state_version_id + " (generation " +
                            std::to_string(prior.generation) + ")"));
  return {};
}

Result<std::optional<std::vector<SecretBytes>>> restore_saved_plan(
    const fs::path& envelope, const SecretBytes& dek, const protocol::JobManifest& m,
    const fs::path& contents, const fs::path& plan_out) {
  crypto::EnvelopeExpectation expect{"plan", m.capsule_id, std::nullopt, std::nullopt};
  auto header = crypto::decrypt_file(envelope, contents, dek, expect);
  if (!header) return std::unexpected(integrity_error(header.error(), "saved plan"));
  // decrypt_file checked the plaintext it wrote against the header's digest: no second read.
  const std::string& digest = header->plaintext_sha256;
  if (digest != m.saved_plan->digest) {
    (void)remove_tree(contents);
    return fail(errc::kPlanDigestMismatch, "saved plan has sha256 " + digest +
                                               " but the approved plan is " + m.saved_plan->digest +
                                               "; nothing was applied");
  }
  auto split = split_plan_contents(contents, plan_out);
  if (!split) return std::unexpected(integrity_error(split.error(), "saved plan"));
  return split;
}

Result<SealedArtifact> seal_plan(const fs::path& plan_file,
                                 const std::vector<SecretBytes>& sensitive_values,
                                 const fs::path& contents, const fs::path& outbox,
                                 const protocol::JobManifest& m) {
  (void)::unlink(contents.c_str());  // a scratch file an earlier attempt may have left
  if (auto written = write_plan_contents(plan_file, sensitive_values, contents); !written)
    return std::unexpected(integrity_error(written.error(), "saved plan"));
  crypto::EnvelopeHeader header;
  header.kind = "plan";
  if (m.prior_state) {
    header.generation = m.prior_state->generation;
    header.lineage = m.prior_state->lineage;
    header.serial = m.prior_state->serial;
  }
  auto sealed = seal(contents, outbox, artifact_name(m, "plan"), std::move(header), m);
  (void)::unlink(contents.c_str());  // it holds the plan's secrets in plaintext
  return sealed;
}

Result<SealedArtifact> seal_state(const fs::path& state_file, const fs::path& outbox,
                                  const protocol::JobManifest& m, const StateIdentity& identity) {
  return seal(state_file, outbox, artifact_name(m, "state"), state_header(m, identity), m);
}

Result<SealedArtifact> seal_state_checkpoint(const fs::path& state_file, const fs::path& outbox,
                                             const protocol::JobManifest& m,
                                             const StateIdentity& identity) {
  return seal(state_file, outbox, artifact_name(m, "checkpoint"), state_header(m, identity), m);
}

fs::path sealed_state_path(const fs::path& outbox, const protocol::JobManifest& m) {
  return outbox / artifact_name(m, "state");
}

fs::path checkpoint_path(const fs::path& outbox, const protocol::JobManifest& m) {
  return outbox / artifact_name(m, "checkpoint");
}

Result<SealedState> describe_sealed_state(const fs::path& envelope) {
  auto prefix = crypto::read_envelope_prefix(envelope);
  if (!prefix) return std::unexpected(integrity_error(prefix.error(), envelope.filename().string()));
  if (prefix->header.kind != "state")
    return fail(errc::kStateIntegrityFailed, envelope.string() + " does not hold a state");
  auto digest = crypto::sha256_file_hex(envelope);
  if (!digest) return std::unexpected(integrity_error(digest.error(), envelope.filename().string()));
  SealedState out;
  out.artifact = SealedArtifact{envelope, *digest, prefix->header.plaintext_sha256};
  out.identity.serial = prefix->header.serial;
  out.identity.lineage = prefix->header.lineage;
  return out;
}

}  // namespace takosumi::runner
