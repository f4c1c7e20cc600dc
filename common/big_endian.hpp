#pragma once
// Unsigned integers as big-endian bytes, the byte order of the envelope's and the sealed plan's
// length fields.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace takosumi {

inline std::uint64_t read_big_endian(std::span<const std::uint8_t> bytes) {
  std::uint64_t v = 0;
  for (const auto b : bytes) v = (v << 8) | b;
  return v;
}

inline std::uint64_t read_big_endian(std::string_view bytes) {
  return read_big_endian(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

template <std::size_t N>
std::array<std::uint8_t, N> big_endian(std::uint64_t v) {
  std::array<std::uint8_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[N - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
  return out;
}

inline void append_big_endian(std::string& out, std::uint64_t v, std::size_t width) {
  for (std::size_t i = width; i-- > 0;) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace takosumi
