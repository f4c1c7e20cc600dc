#pragma once
// The control plane's two key pairs: the X25519 storage key every StateVersion and saved plan is
// sealed to, and the Ed25519 key that signs job manifests. Files under <data>/keys (0600); the
// signing public key is also written to keys/signing.pub so agents can pin it.
// Storage keys replaced by a rotation (key_rotation.hpp) stay in keys/retired/ and only open what
// was sealed to them: StateVersions, plans and secrets are never re-encrypted by a rotation.
// Immutable after load, so it may be read from the blocking-work pool.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "crypto/envelope.hpp"
#include "crypto/keys.hpp"

namespace takosumi::controlplane {

class Keyring {
 public:
  static Result<Keyring> load_or_create(const std::filesystem::path& data_dir);
  Keyring(crypto::BoxKeyPair storage, crypto::SignKeyPair signing,
          std::vector<crypto::BoxKeyPair> retired_storage = {});

  // First 16 hex characters of sha256(storage public key).
  const std::string& key_id() const { return key_id_; }
  const crypto::BoxPublicKey& storage_public_key() const { return storage_.public_key; }
  const crypto::SignKeyPair& signing_key() const { return signing_; }

  // Each of these opens with the storage key the envelope names (its header's key id), the current
  // one or a retired one.
  // Checks that the envelope's DEK is sealed to our storage key (it opens) without keeping it.
  Status check_dek(const crypto::EnvelopePrefix& prefix) const;
  // Opens the DEK of the envelope at path and seals it to `to`; returns the sealed box as
  // base64. Reads only the envelope prefix, never the payload.
  Result<std::string> reseal_dek(const std::filesystem::path& envelope,
                                 const crypto::BoxPublicKey& to) const;
  // Opens a box sealed (crypto::seal) to the storage key, or to a retired one: secrets at rest.
  // envelope_wrong_key when it was sealed to another key or altered.
  Result<SecretBytes> open_sealed(std::span<const std::uint8_t> sealed) const;

 private:
  // The envelope's DEK, opened with the key its header names first, then with every other one (a
  // state transfer re-seals the DEK to this control plane's key under the source's key id).
  Result<SecretBytes> open_dek(const crypto::EnvelopePrefix& prefix) const;

  crypto::BoxKeyPair storage_;
  crypto::SignKeyPair signing_;
  std::string key_id_;
  std::vector<crypto::BoxKeyPair> retired_;
  std::vector<std::string> retired_ids_;
};

// The key id of a storage public key: the first 16 hex characters of its SHA-256.
std::string storage_key_id(const crypto::BoxPublicKey& key);

}  // namespace takosumi::controlplane
