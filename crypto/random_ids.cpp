#include "crypto/random_ids.hpp"

#include <sodium.h>

#include <array>
#include <cstdint>

#include "common/encoding.hpp"
#include "crypto/sha256.hpp"
#include "crypto/sodium_init.hpp"

namespace takosumi::crypto {
namespace {

std::string random_hex(std::size_t bytes) {
  std::array<std::uint8_t, 32> buf{};
  random_bytes(std::span(buf.data(), bytes));
  return hex_encode(std::span<const std::uint8_t>(buf.data(), bytes));
}

std::array<std::uint8_t, crypto_hash_sha256_BYTES> digest(std::string_view s) {
  std::array<std::uint8_t, crypto_hash_sha256_BYTES> out{};
  crypto_hash_sha256(out.data(), reinterpret_cast<const unsigned char*>(s.data()), s.size());
  return out;
}

}  // namespace

void random_bytes(std::span<std::uint8_t> out) {
  detail::ensure_sodium();
  randombytes_buf(out.data(), out.size());
}

std::string new_id(std::string_view prefix) { return std::string(prefix) + "_" + random_hex(16); }

std::string new_token() { return random_hex(32); }

std::string token_sha256(std::string_view token) { return crypto::sha256_hex(token); }

bool secrets_equal(std::string_view a, std::string_view b) {
  const auto da = digest(a);
  const auto db = digest(b);
  return sodium_memcmp(da.data(), db.data(), da.size()) == 0;
}

}  // namespace takosumi::crypto
