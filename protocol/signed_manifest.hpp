#pragma once
// Signed job manifests (docs/protocol.md "Job manifest"): an Ed25519 detached signature
// (crypto/signature.hpp) over the exact payload bytes, checked before anything is parsed; then the
// protocol's rules — expiry, addressee, nonce replay.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "crypto/keys.hpp"
#include "protocol/job_manifest.hpp"

namespace takosumi::protocol {

struct SignedManifest {
  std::string payload;    // base64 of the manifest JSON bytes
  std::string signature;  // base64 Ed25519 signature of those bytes
};

SignedManifest sign_manifest(const JobManifest& manifest, const crypto::SignKeyPair& key);

// Verifies manifests for one agent against the pinned control-plane key. Remembers nonces until
// their manifest expires, so a replayed manifest is refused. Not thread-safe (one per agent loop).
// Errors: manifest_bad_signature, manifest_invalid, manifest_expired, manifest_wrong_agent,
// manifest_replayed.
class ManifestVerifier {
 public:
  ManifestVerifier(crypto::SignPublicKey pinned, std::string agent_id, const Clock& clock);
  Result<JobManifest> verify(const SignedManifest& signed_manifest);

  // Nonces accepted before a restart (see agent/durable/nonce_journal.hpp), refused as replays too.
  void remember(std::string nonce, std::int64_t expires_at);
  // Called for every newly accepted nonce before verify() returns the manifest; when it fails
  // the manifest is refused (a nonce that cannot be recorded could be replayed after a restart).
  using NonceRecorder = std::function<Status(const std::string& nonce, std::int64_t expires_at)>;
  void set_recorder(NonceRecorder recorder) { recorder_ = std::move(recorder); }

 private:
  void forget_expired(std::int64_t now);

  crypto::SignPublicKey pinned_;
  std::string agent_id_;
  const Clock& clock_;
  std::map<std::string, std::int64_t> seen_nonces_;  // nonce → expires_at
  NonceRecorder recorder_;
};

}  // namespace takosumi::protocol
