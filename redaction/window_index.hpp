#pragma once
// Every 8-byte piece ("window") of the secret strings a Run holds, so that a piece split off a
// secret — tofu flushing half a line, a chunk boundary — is recognised wherever it turns up.
// A window is its 8 bytes read as one 64-bit value, kept in an open-addressing table (no hash
// collisions: the key is the text itself) with a bloom filter in front that keeps a scan of
// ordinary text to one multiply and two bit tests per byte. Table and filter are secret material
// and live in SecretBytes (zeroed when dropped or regrown). Not thread-safe: SecretSet guards it.
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "common/secret_bytes.hpp"

namespace takosumi::redaction {

class WindowIndex {
 public:
  static constexpr std::size_t kWindow = 8;
  // 16 MiB of table at most; past it a Run's further strings are matched whole only.
  static constexpr std::size_t kMaxWindows = std::size_t{1} << 20;

  // Indexes every window of s (s must hold no whitespace: a window never spans a word break,
  // which lets a stream release text at the end of every line). All or nothing: false, adding
  // nothing, when s's windows would pass kMaxWindows; capped() is true from then on.
  bool add(std::string_view s);

  bool empty() const { return windows_ == 0; }
  std::size_t size() const { return windows_; }
  bool capped() const { return capped_; }

  // Whether text[at, at + 8) is a window of a stored string; at + 8 <= text.size(). Inline: it
  // runs for every byte of every log line.
  bool contains_at(std::string_view text, std::size_t at) const {
    std::uint64_t w;
    std::memcpy(&w, text.data() + at, sizeof w);
    return maybe(w) && find(w);
  }

  // How many bytes at the end of text could begin a window that continues in text not seen yet
  // (0 to 7; conservative: those bytes and their neighbouring pairs occur in stored strings).
  std::size_t open_tail(std::string_view text) const;

 private:
  // splitmix64's finaliser: the filter's two bit positions come from independent halves.
  static std::uint64_t mix(std::uint64_t w) {
    w = (w ^ (w >> 30)) * 0xbf58476d1ce4e5b9ULL;
    w = (w ^ (w >> 27)) * 0x94d049bb133111ebULL;
    return w ^ (w >> 31);
  }
  bool maybe(std::uint64_t w) const {
    if (filter_bits_ == 0) return false;
    const auto h = mix(w);
    const std::uint64_t mask = (std::uint64_t{1} << filter_bits_) - 1;
    const auto bit = [&](std::uint64_t i) { return (filter_.data()[i >> 3] >> (i & 7)) & 1; };
    return bit(h & mask) && bit((h >> 32) & mask);
  }
  bool find(std::uint64_t w) const;
  std::size_t home(std::uint64_t w) const;
  void insert(std::uint64_t w);
  void grow();
  void set_filter_bits(std::uint64_t w);
  std::uint64_t slot(std::size_t i) const;
  void set_slot(std::size_t i, std::uint64_t w);

  SecretBytes table_;   // capacity_ slots of 8 bytes; 0 marks a free slot
  SecretBytes filter_;  // bloom bits, two per window
  std::size_t capacity_ = 0;
  unsigned capacity_bits_ = 0;
  unsigned filter_bits_ = 0;
  std::size_t windows_ = 0;
  bool has_zero_ = false;  // the window of eight NUL bytes (0 marks free slots)
  bool capped_ = false;
  std::bitset<256> bytes_;     // bytes that occur in an indexed string
  std::bitset<65536> pairs_;   // adjacent byte pairs that occur in one
};

}  // namespace takosumi::redaction
