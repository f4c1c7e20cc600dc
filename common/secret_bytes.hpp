#pragma once
// Owner of secret material (keys, DEKs, Connection values). Memory is zeroed on destruction and
// on move-from; the value is never formatted: streaming or fmt-formatting prints "[redacted]".
// Move-only, so a secret is never silently duplicated.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string_view>
#include <vector>

namespace takosumi {

class SecretBytes {
 public:
  SecretBytes() = default;
  explicit SecretBytes(std::size_t size);
  SecretBytes(std::span<const std::uint8_t> bytes);
  static SecretBytes from_string(std::string_view text);
  ~SecretBytes();

  SecretBytes(SecretBytes&& other) noexcept;
  SecretBytes& operator=(SecretBytes&& other) noexcept;
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;

  // Explicit copy, for the rare place a second owner is really needed.
  [[nodiscard]] SecretBytes clone() const { return SecretBytes(span()); }

  std::uint8_t* data() { return bytes_.data(); }
  const std::uint8_t* data() const { return bytes_.data(); }
  std::size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  std::span<const std::uint8_t> span() const { return bytes_; }
  std::span<std::uint8_t> mutable_span() { return bytes_; }
  // A view for APIs that need text (env values); never log it.
  std::string_view reveal_as_string() const {
    return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
  }
  void wipe();

 private:
  std::vector<std::uint8_t> bytes_;
};

std::ostream& operator<<(std::ostream& os, const SecretBytes&);

}  // namespace takosumi
