#pragma once
// Random identifiers and bearer tokens (libsodium randombytes), and how tokens are kept: only
// their SHA-256 is stored, and secrets from the outside are compared in constant time.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace takosumi::crypto {

// Fills out from libsodium's random source (initialised here: nothing outside crypto/ calls
// sodium_init).
void random_bytes(std::span<std::uint8_t> out);
// "<prefix>_<32 hex>", e.g. new_id("ws") → "ws_9f…".
std::string new_id(std::string_view prefix);
// 256-bit random token as 64 hex characters.
std::string new_token();
// Lowercase hex SHA-256 of a token; what the database stores.
std::string token_sha256(std::string_view token);
// Constant-time equality of two secrets of any length (compares their SHA-256 digests).
bool secrets_equal(std::string_view a, std::string_view b);

}  // namespace takosumi::crypto
