#pragma once
// The control plane's two key pairs: the X25519 storage key every StateVersion and saved plan is
// sealed to, and the Ed25519 key that signs job manifests. Files under <data>/keys (0600); the
// signing public key is also written to keys/signing.pub so agents can pin it.
// Immutable after load, so it may be read from the blocking-work pool.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "crypto/envelope.hpp"
#include "crypto/keys.hpp"

namespace takosumi::controlplane {

class Keyring {
 public:
  static Result<Keyring> load_or_create(const std::filesystem::path& data_dir);
  Keyring(crypto::BoxKeyPair storage, crypto::SignKeyPair signing);

  // First 16 hex characters of sha256(storage public key).
  const std::string& key_id() const { return key_id_; }
  const crypto::BoxPublicKey& storage_public_key() const { return storage_.public_key; }
  const crypto::SignKeyPair& signing_key() const { return signing_; }

  // Checks that the envelope's DEK is sealed to our storage key (it opens) without keeping it.
  Status check_dek(const crypto::EnvelopePrefix& prefix) const;
  // Opens the DEK of the envelope at path and seals it to `to`; returns the sealed box as
  // base64. Reads only the envelope prefix, never the payload.
  Result<std::string> reseal_dek(const std::filesystem::path& envelope,
                                 const crypto::BoxPublicKey& to) const;
  // Opens a box sealed (crypto::seal) to the storage key: secrets at rest. envelope_wrong_key when
  // it was sealed to another key or altered.
  Result<SecretBytes> open_sealed(std::span<const std::uint8_t> sealed) const;

 private:
  crypto::BoxKeyPair storage_;
  crypto::SignKeyPair signing_;
  std::string key_id_;
};

}  // namespace takosumi::controlplane
