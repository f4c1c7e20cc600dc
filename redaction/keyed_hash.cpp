#include "redaction/keyed_hash.hpp"

#include <sodium.h>

#include <cstring>

#include "crypto/random_ids.hpp"

namespace takosumi::redaction {
namespace {

// (GCC's 128-bit integer: the one multiplication here that needs it)
__extension__ typedef unsigned __int128 Wide;

constexpr std::uint64_t kPrime = (std::uint64_t{1} << 61) - 1;
// Bases below the alphabet would make short strings' hashes their own text.
constexpr std::uint64_t kMinBase = 256;

std::uint64_t reduce(std::uint64_t x) {  // x < 2^62
  x = (x & kPrime) + (x >> 61);
  return x >= kPrime ? x - kPrime : x;
}

}  // namespace

KeyedHash::KeyedHash() : base_(sizeof(std::uint64_t)) {
  std::uint64_t base;
  crypto::random_bytes({reinterpret_cast<std::uint8_t*>(&base), sizeof base});
  base = kMinBase + base % (kPrime - kMinBase);
  std::memcpy(base_.data(), &base, sizeof base);
  sodium_memzero(&base, sizeof base);
}

std::uint64_t KeyedHash::base() const {
  std::uint64_t base;
  std::memcpy(&base, base_.data(), sizeof base);
  return base;
}

std::uint64_t KeyedHash::multiply(std::uint64_t a, std::uint64_t b) {
  const auto product = static_cast<Wide>(a) * b;
  return reduce(static_cast<std::uint64_t>(product & kPrime) +
                static_cast<std::uint64_t>(product >> 61));
}

std::uint64_t KeyedHash::subtract(std::uint64_t a, std::uint64_t b) {
  return a >= b ? a - b : a + kPrime - b;
}

HashDigest KeyedHash::digest(std::string_view s) const {
  const auto b = base();
  HashDigest d;
  for (const char c : s) {
    d.hash = reduce(multiply(d.hash, b) + static_cast<unsigned char>(c));
    d.power = multiply(d.power, b);
  }
  return d;
}

void KeyedHash::prefixes(std::string_view text, std::span<std::uint8_t> out) const {
  const auto b = base();
  std::uint64_t h = 0;
  std::memcpy(out.data(), &h, sizeof h);
  for (std::size_t i = 0; i < text.size(); ++i) {
    h = reduce(multiply(h, b) + static_cast<unsigned char>(text[i]));
    std::memcpy(out.data() + (i + 1) * sizeof h, &h, sizeof h);
  }
}

TextHashes::TextHashes(const KeyedHash& hash, std::string_view text)
    : prefixes_((text.size() + 1) * sizeof(std::uint64_t)) {
  hash.prefixes(text, prefixes_.mutable_span());
}

std::uint64_t TextHashes::prefix(std::size_t i) const {
  std::uint64_t h;
  std::memcpy(&h, prefixes_.data() + i * sizeof h, sizeof h);
  return h;
}

// hash(text[at, at + n)) = prefix(at + n) - prefix(at) * base^n
bool TextHashes::equals(std::size_t at, std::size_t length, const HashDigest& digest) const {
  const auto shifted = KeyedHash::multiply(prefix(at), digest.power);
  return KeyedHash::subtract(prefix(at + length), shifted) == digest.hash;
}

}  // namespace takosumi::redaction
