#pragma once
// Builds and signs the job manifest for a claimed Run (docs/protocol.md "Job manifest"). DEKs of
// the prior StateVersion and of the saved plan are opened with the storage key and re-sealed to
// the claiming agent; the envelopes' payloads are never read.
// The Capsule's Connection values and sensitive variables are opened with the storage key, put into
// a SecretBundle and sealed to the claiming agent ("secrets"); the plaintext exists only in
// SecretBytes while the manifest is built.
// Errors: state_integrity_failed when a needed blob is missing; conflict when an apply's plan was
// made against a generation that is no longer current; connection_revoked / connection_expired
// when an assigned Connection is no longer active; dependency_output_missing when a required
// input of a Dependency is not published; crypto errors from re-sealing.
#include <cstdint>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/runs/run_queue.hpp"
#include "controlplane/store/stores.hpp"
#include "protocol/signed_manifest.hpp"

namespace takosumi::controlplane {

// What an offline Run bundle's manifest adds (docs/air-gapped.md): the source as a pack the bundle
// carries (its digest and the commit's tree id) and a validity of its own.
struct OfflineSource {
  std::string tree;
  std::string pack_sha256;
  std::int64_t expires_at = 0;
};

class ManifestBuilder {
 public:
  ManifestBuilder(const Stores& stores, const Clock& clock, std::int64_t ttl_seconds)
      : stores_(stores), clock_(clock), ttl_seconds_(ttl_seconds) {}

  Result<protocol::JobManifest> build(const ClaimedRun& claimed, const Agent& agent,
                                      const OfflineSource* offline = nullptr);
  Result<protocol::SignedManifest> build_signed(const ClaimedRun& claimed, const Agent& agent,
                                                const OfflineSource* offline = nullptr);

 private:
  Result<std::string> reseal(std::string_view sha256, std::string_view what,
                             const crypto::BoxPublicKey& to);
  Status add_saved_plan(const ClaimedRun& claimed, const crypto::BoxPublicKey& to,
                        protocol::JobManifest& m);
  Result<protocol::SecretBundle> open_secrets(const Capsule& capsule);
  Status add_secrets(const Capsule& capsule, const crypto::BoxPublicKey& to,
                     protocol::JobManifest& m);
  // The producers' current public Outputs the Capsule's Dependencies map, as variables of m,
  // and what was taken recorded on the Run; dependency_output_missing for a required one that
  // is not published (or not of its type).
  Status add_dependency_inputs(const Run& run, protocol::JobManifest& m);

  Stores stores_;
  const Clock& clock_;
  std::int64_t ttl_seconds_;
};

}  // namespace takosumi::controlplane
