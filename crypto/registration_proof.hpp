#pragma once
// Proof that an agent holds the Ed25519 key it registers with (docs/protocol.md "Register"): a
// detached signature over a canonical, domain-separated message that ties the control plane's
// single-use challenge to everything the registration claims, so one signature cannot serve
// another name, key pair, pool token or control plane.
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "crypto/keys.hpp"

namespace takosumi::crypto {

inline constexpr std::string_view kRegistrationDomain = "takosumi-agent-register-v1";

struct RegistrationClaim {
  std::string challenge;              // as the control plane issued it (opaque text)
  std::string name;                   // the agent's name
  SignPublicKey sign_public_key;      // the agent's, the key that signs
  BoxPublicKey box_public_key;        // the agent's
  std::string pool_token_sha256;      // lowercase hex SHA-256 of the pool token sent along
  SignPublicKey control_signing_key;  // the control plane's (the agent's pinned key)
};

// The signed bytes: kRegistrationDomain, challenge, name, sign key (32 bytes), box key (32 bytes),
// pool token SHA-256 (hex text), control key (32 bytes), each as a 4-byte big-endian length
// followed by its bytes, so no two claims share a message.
std::string registration_message(const RegistrationClaim& claim);
// Base64 of the Ed25519 signature of registration_message(claim) by key.
std::string sign_registration(const RegistrationClaim& claim, const SignKeyPair& key);
// Ok only when signature is the base64 of a 64-byte Ed25519 signature of
// registration_message(claim) by claim.sign_public_key; registration_signature_invalid otherwise.
Status verify_registration(const RegistrationClaim& claim, std::string_view signature);

}  // namespace takosumi::crypto
