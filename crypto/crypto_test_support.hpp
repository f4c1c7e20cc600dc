#pragma once
// Test-only helpers for crypto/ tests: whole-file access and deterministic bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace takosumi::crypto::test_support {

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline unsigned mode_of(const std::filesystem::path& path) {
  return static_cast<unsigned>(std::filesystem::status(path).permissions()) & 0777u;
}

// Deterministic bytes (no randomness in tests) that differ from chunk to chunk.
inline std::string pattern_bytes(std::size_t n) {
  std::string out(n, '\0');
  std::uint32_t x = 2463534242u;
  for (auto& c : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x & 0xff);
  }
  return out;
}

}  // namespace takosumi::crypto::test_support
