#include "crypto/signature.hpp"

#include <sodium.h>

#include <array>
#include <cstdint>

#include "common/encoding.hpp"
#include "crypto/sodium_init.hpp"

namespace takosumi::crypto {

std::string sign_detached(std::string_view message, const SignKeyPair& key) {
  detail::ensure_sodium();
  std::array<std::uint8_t, crypto_sign_BYTES> signature{};
  crypto_sign_detached(signature.data(), nullptr, as_bytes(message).data(), message.size(),
                       key.secret_key.data());
  return base64_encode(signature);
}

SignatureCheck verify_detached(std::string_view message, std::string_view signature_base64,
                               const SignPublicKey& key) {
  detail::ensure_sodium();
  auto signature = base64_decode(signature_base64);
  if (!signature || signature->size() != crypto_sign_BYTES) return SignatureCheck::malformed;
  if (crypto_sign_verify_detached(signature->data(), as_bytes(message).data(), message.size(),
                                  key.bytes.data()) != 0)
    return SignatureCheck::mismatch;
  return SignatureCheck::valid;
}

}  // namespace takosumi::crypto
