#include "crypto/sealed_box.hpp"

#include <sodium.h>

#include "common/error_codes.hpp"
#include "crypto/sodium_init.hpp"

namespace takosumi::crypto {

std::vector<std::uint8_t> seal(std::span<const std::uint8_t> secret, const BoxPublicKey& to) {
  detail::ensure_sodium();
  std::vector<std::uint8_t> out(crypto_box_SEALBYTES + secret.size());
  if (crypto_box_seal(out.data(), secret.data(), secret.size(), to.bytes.data()) != 0)
    return {};
  return out;
}

Result<SecretBytes> open_sealed(std::span<const std::uint8_t> sealed, const BoxKeyPair& keys) {
  detail::ensure_sodium();
  if (sealed.size() < crypto_box_SEALBYTES)
    return fail(errc::kEnvelopeWrongKey,
                "sealed box of " + std::to_string(sealed.size()) + " bytes is shorter than " +
                    std::to_string(crypto_box_SEALBYTES) + "; it was not made by seal()");
  if (keys.secret_key.size() != crypto_box_SECRETKEYBYTES)
    return fail(errc::kInvalidArgument, "X25519 secret key must be 32 bytes");
  SecretBytes out(sealed.size() - crypto_box_SEALBYTES);
  if (crypto_box_seal_open(out.data(), sealed.data(), sealed.size(), keys.public_key.bytes.data(),
                           keys.secret_key.data()) != 0)
    return fail(errc::kEnvelopeWrongKey,
                "sealed box does not open with this X25519 key (sealed to another key, or "
                "altered); check that the sender used this agent's current public key");
  return out;
}

}  // namespace takosumi::crypto
