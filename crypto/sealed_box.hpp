#pragma once
// Anonymous sealing (crypto_box_seal) of small secrets such as 32-byte DEKs to an X25519 key.
#include <cstdint>
#include <span>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "crypto/keys.hpp"

namespace takosumi::crypto {

// Returns an empty vector when `to` is unusable (a low-order point such as all zeros);
// BoxPublicKey::from_base64 already refuses those.
std::vector<std::uint8_t> seal(std::span<const std::uint8_t> secret, const BoxPublicKey& to);
// Fails with envelope_wrong_key when the box was not sealed to this key pair (or was altered).
Result<SecretBytes> open_sealed(std::span<const std::uint8_t> sealed, const BoxKeyPair& keys);

}  // namespace takosumi::crypto
