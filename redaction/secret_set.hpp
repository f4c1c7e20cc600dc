#pragma once
// The exact secret values one Run holds (Connection values, sensitive variables and outputs, values
// OpenTofu marks sensitive), the forms they take in tofu's output and their common encodings, for
// redaction of every text that leaves the agent and the refusal of Outputs. Thread-safe: the
// agent's log sink reads a set from other threads while the Run adds values it discovers mid-Run.
// Values, their forms and the index of their pieces are held in zeroing memory.
//
// What redaction replaces (redact, redact_prefix): every occurrence of a stored string, and every
// run of text covered by 8-byte pieces ("windows") of a stored string — a piece of a secret split
// off by a partial-line flush or a chunk boundary. Windows are indexed for a value without
// whitespace and all its forms; for a value with whitespace, for its encodings and for its
// whitespace-free words of at least 16 bytes ("Bearer <jwt>", a PEM body line; pieces of short
// words would be ordinary words). Overlapping matches merge into one; each line of a merged match
// becomes one kRedactionMarker, so line counts never change.
// What an Output check finds (contains_secret, find_form): whole stored strings only — a value
// that merely shares 8 bytes with a secret is not refused.
// Cost: a scan compares at most kComparedPrefix bytes of each candidate stored string with the text
// and the rest through a KeyedHash, so the work per byte of text depends on how many stored strings
// begin alike, never on their length or on the text (a module may print text crafted to agree with
// a long secret it planted).
#include <array>
#include <atomic>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/secret_bytes.hpp"
#include "redaction/keyed_hash.hpp"
#include "redaction/secret_encodings.hpp"
#include "redaction/window_index.hpp"

namespace takosumi::redaction {

inline constexpr std::string_view kRedactionMarker = "[REDACTED]";
// Shorter values ("true", "5432", "admin") are refused: redacting them everywhere would destroy
// every log, and they are not worth hiding by value.
inline constexpr std::size_t kMinRedactedLength = 6;
// Bytes of a stored string compared with text byte by byte; beyond them, a keyed hash decides.
inline constexpr std::size_t kComparedPrefix = 64;

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
  // `tofu show -json`), the form with CRLF line ends turned to LF, for a multi-line value every
  // line of at least 16 bytes (tofu prints multi-line strings as indented heredocs) except PEM
  // "-----BEGIN …"/"-----END …" lines, and the encodings of redaction/secret_encodings.hpp. Windows
  // are indexed as said above (PEM armour lines never), up to WindowIndex::kMaxWindows for the set
  // (see windows_capped). Returns false, storing nothing, for a value shorter than
  // kMinRedactedLength; true otherwise (duplicates too).
  bool add(std::string_view value);

  // Accepted add() calls that stored something new (variants not counted).
  std::size_t size() const;
  bool empty() const;
  // Length of the longest stored string, variants included.
  std::size_t max_length() const;

  // True once a stored string's windows did not fit: its split-off pieces are not redacted.
  bool windows_capped() const;

  // Replaces every match (see above). A match spanning lines keeps its line breaks and each of its
  // lines becomes one kRedactionMarker, so the line count of the text never changes.
  std::string redact(std::string_view text) const;
  // Whether text contains a whole stored string (any form; windows do not count), and which form
  // the leftmost one is.
  bool contains_secret(std::string_view text) const;
  std::optional<SecretForm> find_form(std::string_view text) const;

  // redact() for a stream: keeps back the end of text that a match may still extend or begin in —
  // a proper prefix of a stored string, up to 7 bytes that may begin a window, and any match
  // reaching into those — so that redacting the held rest together with what follows gives the
  // same result as redacting the whole stream at once. Conservative past kComparedPrefix bytes: an
  // end shorter than a stored string that agrees with its first kComparedPrefix bytes is held.
  PrefixRedaction redact_prefix(std::string_view text) const;

  // Bytes of stored strings compared with text and bytes of text hashed by all scans so far: the
  // measure of the bound above, for tests and benchmarks.
  std::uint64_t work() const { return work_.load(std::memory_order_relaxed); }

 private:
  struct Span {
    std::size_t begin = 0;
    std::size_t end = 0;
  };
  struct Stored {
    SecretBytes text;
    SecretForm form = SecretForm::value;
    SecretBytes digest;  // a HashDigest, for a string longer than kComparedPrefix
  };
  struct Scan;  // one pass over a text: its hashes, once needed, and the work done
  // Every match in text, overlapping ones merged, in order.
  std::vector<Span> matches(Scan& scan) const;
  bool may_begin_at(std::string_view text, std::size_t at) const;
  // The index in strings_ of the longest stored string at text[at...].
  std::optional<std::uint32_t> longest_at(Scan& scan, std::size_t at) const;
  bool equal_at(Scan& scan, std::size_t at, const Stored& stored) const;
  // Where a stream must stop releasing text (see redact_prefix).
  std::size_t hold_from(Scan& scan, const std::vector<Span>& spans) const;
  bool starts_a_stored_string(Scan& scan, std::size_t at) const;
  // windows: index its 8-byte pieces too (the caller has checked it holds no whitespace).
  bool store(std::string_view variant, SecretForm form, bool windows);
  bool stored(std::string_view variant) const;

  mutable std::shared_mutex mutex_;
  std::vector<Stored> strings_;
  WindowIndex windows_;
  KeyedHash hash_;
  // Indices into strings_ by first byte, longest first, so the first full match is the longest.
  std::array<std::vector<std::uint32_t>, 256> by_first_byte_;
  // Which first-two-byte pairs begin a stored string: for the end of a stream, where a stored
  // string may have begun only a byte or two ago.
  std::bitset<65536> first_pairs_;
  // A bloom filter of the first four bytes of every stored string (every one has at least six):
  // lets the scan skip almost every position of ordinary text, ids and hashes included, at once.
  static constexpr unsigned kHeadBits = 20;
  SecretBytes heads_{(std::size_t{1} << kHeadBits) / 8};
  std::size_t values_ = 0;
  std::size_t max_length_ = 0;
  mutable std::atomic<std::uint64_t> work_{0};
};

}  // namespace takosumi::redaction
