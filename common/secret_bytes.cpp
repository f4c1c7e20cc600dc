#include "common/secret_bytes.hpp"

#include <sodium.h>

#include <ostream>

namespace takosumi {

SecretBytes::SecretBytes(std::size_t size) : bytes_(size, 0) {}

SecretBytes::SecretBytes(std::span<const std::uint8_t> bytes) : bytes_(bytes.begin(), bytes.end()) {}

SecretBytes SecretBytes::from_string(std::string_view text) {
  return SecretBytes(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

SecretBytes::~SecretBytes() { wipe(); }

SecretBytes::SecretBytes(SecretBytes&& other) noexcept : bytes_(std::move(other.bytes_)) {
  other.wipe();
}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
  if (this != &other) {
    wipe();
    bytes_ = std::move(other.bytes_);
    other.wipe();
  }
  return *this;
}

void SecretBytes::wipe() {
  if (!bytes_.empty()) sodium_memzero(bytes_.data(), bytes_.size());
  bytes_.clear();
  bytes_.shrink_to_fit();
}

std::ostream& operator<<(std::ostream& os, const SecretBytes&) { return os << "[redacted]"; }

}  // namespace takosumi
