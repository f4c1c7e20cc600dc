#pragma once
// Ed25519 detached signatures over exact bytes: the one primitive behind signed job manifests
// (protocol/signed_manifest.hpp) and registration proofs. Signatures travel as base64.
#include <string>
#include <string_view>

#include "crypto/keys.hpp"

namespace takosumi::crypto {

// Base64 of the 64-byte Ed25519 signature of message by key.
std::string sign_detached(std::string_view message, const SignKeyPair& key);

enum class SignatureCheck {
  valid,
  malformed,  // not the base64 of 64 bytes
  mismatch,   // well formed, but not key's signature of message
};
// Callers turn malformed and mismatch into their own stable codes and messages.
SignatureCheck verify_detached(std::string_view message, std::string_view signature_base64,
                               const SignPublicKey& key);

}  // namespace takosumi::crypto
