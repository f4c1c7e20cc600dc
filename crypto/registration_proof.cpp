#include "crypto/registration_proof.hpp"

#include <cstdint>
#include <span>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "crypto/signature.hpp"

namespace takosumi::crypto {
namespace {

void append_field(std::string& out, std::string_view field) {
  const auto n = static_cast<std::uint32_t>(field.size());
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(field);
}

void append_field(std::string& out, std::span<const std::uint8_t> field) {
  append_field(out, as_chars(field));
}

}  // namespace

std::string registration_message(const RegistrationClaim& claim) {
  std::string out;
  append_field(out, kRegistrationDomain);
  append_field(out, claim.challenge);
  append_field(out, claim.name);
  append_field(out, claim.sign_public_key.bytes);
  append_field(out, claim.box_public_key.bytes);
  append_field(out, claim.pool_token_sha256);
  append_field(out, claim.control_signing_key.bytes);
  return out;
}

std::string sign_registration(const RegistrationClaim& claim, const SignKeyPair& key) {
  return sign_detached(registration_message(claim), key);
}

Status verify_registration(const RegistrationClaim& claim, std::string_view signature) {
  switch (verify_detached(registration_message(claim), signature, claim.sign_public_key)) {
    case SignatureCheck::valid:
      return {};
    case SignatureCheck::malformed:
      return fail(errc::kRegistrationSignatureInvalid,
                  "registration signature must be the base64 of a 64-byte Ed25519 signature");
    case SignatureCheck::mismatch:
      break;
  }
  return fail(errc::kRegistrationSignatureInvalid,
              "registration signature does not verify with signPublicKey for this challenge, "
              "name, box key, pool token and control plane; check that the agent's pinned "
              "control-plane signing key is this control plane's key (keys/signing.pub)");
}

}  // namespace takosumi::crypto
