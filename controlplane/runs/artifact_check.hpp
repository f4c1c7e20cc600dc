#pragma once
// Checks an uploaded artifact before it is kept: the body's SHA-256 (received_sha256, hashed by
// the server as the body arrived) equals what the agent claims,
// the bytes are a well-formed envelope of the expected kind for the Run's Capsule, and its DEK is
// sealed to our storage key. Only then is the file adopted into the BlobStore. Never decrypts the
// payload. Blocking (reads the envelope's header, moves the file): run it on the blocking-work pool.
// Errors: invalid_argument (digest mismatch, wrong kind/capsule), envelope_* (framing, key).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "controlplane/store/blob_store.hpp"
#include "controlplane/store/keys/keyring.hpp"

namespace takosumi::controlplane {

struct StoredArtifact {
  std::string sha256;
  std::int64_t size = 0;
};

Result<StoredArtifact> check_and_store_upload(const std::filesystem::path& temp,
                                              std::string_view received_sha256,
                                              std::string_view claimed_sha256,
                                              std::string_view kind, std::string_view capsule_id,
                                              const Keyring& keys, const BlobStore& blobs);

// The same for a plan view (protocol/plan_view.hpp), which is redacted JSON, not an envelope: at
// most kMaxPlanViewBytes, well-formed, and of this Run. Errors: invalid_argument,
// payload_too_large.
Result<StoredArtifact> check_and_store_plan_view(const std::filesystem::path& temp,
                                                 std::string_view received_sha256,
                                                 std::string_view claimed_sha256,
                                                 std::string_view run_id, const BlobStore& blobs);

}  // namespace takosumi::controlplane
