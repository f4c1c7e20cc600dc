#include "common/encoding.hpp"

#include <sodium.h>

#include "common/error_codes.hpp"

namespace takosumi {

std::string base64_encode(std::span<const std::uint8_t> bytes) {
  constexpr int kVariant = sodium_base64_VARIANT_ORIGINAL;
  std::string out(sodium_base64_encoded_len(bytes.size(), kVariant), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes.data(), bytes.size(), kVariant);
  out.resize(out.size() - 1);  // drop the terminating NUL sodium writes
  return out;
}

std::string base64_encode(std::string_view bytes) { return base64_encode(as_bytes(bytes)); }

Result<std::vector<std::uint8_t>> base64_decode(std::string_view text) {
  std::vector<std::uint8_t> out(text.size() / 4 * 3 + 3);
  std::size_t len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(out.data(), out.size(), text.data(), text.size(), nullptr, &len, &end,
                        sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size()) {
    return fail(errc::kInvalidArgument, "invalid base64");
  }
  out.resize(len);
  return out;
}

std::string hex_encode(std::span<const std::uint8_t> bytes) {
  std::string out(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes.data(), bytes.size());
  out.resize(bytes.size() * 2);
  return out;
}

bool is_lower_hex(std::string_view s, std::size_t length) {
  return s.size() == length && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace takosumi
