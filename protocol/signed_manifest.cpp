#include "protocol/signed_manifest.hpp"

#include <utility>

#include "common/clock.hpp"
#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "crypto/signature.hpp"
#include "common/failure_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi::protocol {
namespace {

constexpr std::size_t kMaxPayloadBytes = 1024 * 1024;
// Base64 of kMaxPayloadBytes, so an oversized payload is refused before it is decoded.
constexpr std::size_t kMaxPayloadBase64 = (kMaxPayloadBytes + 2) / 3 * 4;

// Returns the payload bytes only when they carry a valid signature by the pinned key.
Result<std::string> authenticated_payload(const SignedManifest& signed_manifest,
                                          const crypto::SignPublicKey& pinned) {
  if (signed_manifest.payload.size() > kMaxPayloadBase64)
    return fail(errc::kManifestInvalid, "manifest payload is larger than 1 MiB");
  auto payload = base64_decode(signed_manifest.payload);
  if (!payload) return fail(errc::kManifestBadSignature, "manifest payload is not base64");
  std::string bytes(as_chars(*payload));
  switch (crypto::verify_detached(bytes, signed_manifest.signature, pinned)) {
    case crypto::SignatureCheck::valid:
      return bytes;
    case crypto::SignatureCheck::malformed:
      return fail(errc::kManifestBadSignature,
                  "manifest signature must be the base64 of a 64-byte Ed25519 signature");
    case crypto::SignatureCheck::mismatch:
      break;
  }
  return fail(errc::kManifestBadSignature,
              "manifest signature does not verify with the pinned control-plane key; check "
              "that the agent's pinned key matches the control plane's signing key");
}

Result<JobManifest> parse_manifest(std::string_view payload) {
  auto object = parse_object(payload, kMaxPayloadBytes);
  if (!object) return fail(errc::kManifestInvalid, "job manifest: " + object.error().message);
  return job_manifest_from_json(*object);
}

}  // namespace

SignedManifest sign_manifest(const JobManifest& manifest, const crypto::SignKeyPair& key) {
  const std::string payload = serialize(to_json(manifest));
  return SignedManifest{base64_encode(payload), crypto::sign_detached(payload, key)};
}

ManifestVerifier::ManifestVerifier(crypto::SignPublicKey pinned, std::string agent_id,
                                   const Clock& clock)
    : pinned_(pinned), agent_id_(std::move(agent_id)), clock_(clock) {}

Result<JobManifest> ManifestVerifier::verify(const SignedManifest& signed_manifest) {
  // Signature first: nothing from an unauthenticated payload is parsed or acted on.
  auto payload = authenticated_payload(signed_manifest, pinned_);
  if (!payload) return std::unexpected(payload.error());
  auto manifest = parse_manifest(*payload);
  if (!manifest) return manifest;
  const std::int64_t now = clock_.now_unix();
  forget_expired(now);
  if (now >= manifest->expires_at)
    return fail(errc::kManifestExpired,
                "manifest for run " + manifest->run_id + " expired at " +
                    utc_timestamp(manifest->expires_at) + " (now " + utc_timestamp(now) +
                    "); check the agent's clock if this repeats");
  if (manifest->agent_id != agent_id_)
    return fail(errc::kManifestWrongAgent, "manifest for run " + manifest->run_id +
                                               " is addressed to agent \"" + manifest->agent_id +
                                               "\", this is \"" + agent_id_ + "\"");
  // Remembered until expiry: after that the expiry check alone refuses a replay.
  if (!seen_nonces_.emplace(manifest->nonce, manifest->expires_at).second)
    return fail(errc::kManifestReplayed, "manifest for run " + manifest->run_id +
                                             " reuses nonce \"" + manifest->nonce +
                                             "\"; it was already accepted once");
  if (recorder_)
    if (auto recorded = recorder_(manifest->nonce, manifest->expires_at); !recorded)
      return std::unexpected(recorded.error().with_context(
          "manifest for run " + manifest->run_id + ": its nonce could not be recorded"));
  return manifest;
}

void ManifestVerifier::remember(std::string nonce, std::int64_t expires_at) {
  seen_nonces_.emplace(std::move(nonce), expires_at);
}

void ManifestVerifier::forget_expired(std::int64_t now) {
  std::erase_if(seen_nonces_, [now](const auto& entry) { return entry.second <= now; });
}

}  // namespace takosumi::protocol
