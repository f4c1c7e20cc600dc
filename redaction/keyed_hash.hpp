#pragma once
// A polynomial hash modulo the prime 2^61 - 1 whose base is drawn at random for each instance and
// kept in zeroing memory. SecretSet uses it to compare a long stored string with text in constant
// time: equal strings always hash equal, and two different strings of length n collide with
// probability at most n / 2^61 over the draw of the base, which text written by a module cannot
// learn. A collision can only make redaction replace more, or an Output check refuse more.
// Immutable after construction: safe to use from several threads.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/secret_bytes.hpp"

namespace takosumi::redaction {

// The hash of a string and base^length, which comparing it with a substring needs.
struct HashDigest {
  std::uint64_t hash = 0;
  std::uint64_t power = 1;
};

class KeyedHash {
 public:
  KeyedHash();

  HashDigest digest(std::string_view s) const;
  // The hash of text[0, i) for every i in [0, text.size()], into out: n + 1 values of 8 bytes.
  void prefixes(std::string_view text, std::span<std::uint8_t> out) const;

  static std::uint64_t multiply(std::uint64_t a, std::uint64_t b);
  static std::uint64_t subtract(std::uint64_t a, std::uint64_t b);

 private:
  std::uint64_t base() const;

  SecretBytes base_;
};

// The hashes of every prefix of one text, computed once in O(n), so that comparing any substring
// with a HashDigest costs O(1). Derived from the text (which may hold secrets): zeroing memory.
class TextHashes {
 public:
  TextHashes(const KeyedHash& hash, std::string_view text);

  // Whether text[at, at + length) hashes to digest; at + length <= text.size().
  bool equals(std::size_t at, std::size_t length, const HashDigest& digest) const;

 private:
  std::uint64_t prefix(std::size_t i) const;

  SecretBytes prefixes_;
};

}  // namespace takosumi::redaction
