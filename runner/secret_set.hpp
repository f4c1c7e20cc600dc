#pragma once
// The exact secret values one Run holds (Connection values, sensitive variables and outputs, values
// OpenTofu marks sensitive), and the forms they take in tofu's output, for redaction of every line
// that leaves the agent. Thread-safe: the agent's log sink reads a set from other threads while the
// Run adds values it discovers mid-Run. Values are held in SecretBytes and zeroed on destruction.
#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/secret_bytes.hpp"

namespace takosumi::runner {

inline constexpr std::string_view kRedactionMarker = "[REDACTED]";
// Shorter values ("true", "5432", "admin") are refused: redacting them everywhere would destroy
// every log, and they are not worth hiding by value.
inline constexpr std::size_t kMinRedactedLength = 6;

// What a redaction of a stream's unfinished tail produced; see SecretSet::redact_prefix.
struct PrefixRedaction {
  std::string redacted;      // redaction of text[0, consumed)
  std::size_t consumed = 0;  // the rest of text could still be the start of a stored value
};

class SecretSet {
 public:
  SecretSet() = default;
  SecretSet(const SecretSet&) = delete;
  SecretSet& operator=(const SecretSet&) = delete;

  // Stores value and its variants: the JSON-escaped form (plain, and Go's HTML-safe form as in
  // `tofu show -json`), the form with CRLF line ends turned to LF, and for a multi-line value every
  // line of at least 16 bytes (tofu prints multi-line strings as indented heredocs) except PEM
  // "-----BEGIN …"/"-----END …" lines. Returns false, storing nothing, for a value shorter than
  // kMinRedactedLength; true otherwise (duplicates too).
  bool add(std::string_view value);

  // Accepted add() calls that stored something new (variants not counted).
  std::size_t size() const;
  bool empty() const;
  // Length of the longest stored string, variants included.
  std::size_t max_length() const;

  // Replaces every occurrence of a stored string, scanning left to right and taking the longest
  // match at each position. A match spanning lines keeps its line breaks and each of its lines
  // becomes one kRedactionMarker, so the line count of the text never changes.
  std::string redact(std::string_view text) const;
  bool contains_secret(std::string_view text) const;

  // redact() for a stream: stops at the first position whose rest of text is a proper prefix of a
  // stored string (a secret that may continue in text not yet seen), so that redacting the held
  // rest together with what follows gives the same result as redacting the whole stream at once.
  PrefixRedaction redact_prefix(std::string_view text) const;

 private:
  enum class Scan { whole, prefix, find_only };
  struct ScanResult {
    std::string out;
    std::size_t consumed = 0;
    bool found = false;
  };
  ScanResult scan(std::string_view text, Scan mode) const;
  bool store(std::string_view variant);
  bool stored(std::string_view variant) const;

  mutable std::shared_mutex mutex_;
  std::vector<SecretBytes> strings_;
  // Indices into strings_ by first byte, longest first, so the first full match is the longest.
  std::array<std::vector<std::uint32_t>, 256> by_first_byte_;
  // Which first-two-byte pairs begin a stored string: lets the scan skip most positions at once.
  std::bitset<65536> first_pairs_;
  std::size_t values_ = 0;
  std::size_t max_length_ = 0;
};

}  // namespace takosumi::runner
