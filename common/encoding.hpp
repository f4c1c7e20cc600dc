#pragma once
// Text encodings used on the wire: standard base64 (with padding) and lowercase hex.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace takosumi {

std::string base64_encode(std::span<const std::uint8_t> bytes);
std::string base64_encode(std::string_view bytes);
// Fails with invalid_argument on any non-base64 input.
Result<std::vector<std::uint8_t>> base64_decode(std::string_view text);
std::string hex_encode(std::span<const std::uint8_t> bytes);
// True when s is exactly length lowercase hex digits, the form hex_encode writes (ids and digests
// are compared as text, so an uppercase spelling is a different, refused value).
bool is_lower_hex(std::string_view s, std::size_t length);
// A SHA-256 digest as the protocol writes it: 64 lowercase hex digits.
inline bool is_sha256_hex(std::string_view s) { return is_lower_hex(s, 64); }

inline std::span<const std::uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}
inline std::string_view as_chars(std::span<const std::uint8_t> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace takosumi
