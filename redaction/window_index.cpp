#include "redaction/window_index.hpp"

#include <algorithm>

namespace takosumi::redaction {
namespace {

constexpr std::size_t kMinCapacityBits = 10;
constexpr unsigned kMinFilterBits = 13;
constexpr unsigned kMaxFilterBits = 24;  // 2 MiB: 16 bits per window at the cap

std::uint64_t load(std::string_view s, std::size_t at) {
  std::uint64_t w;
  std::memcpy(&w, s.data() + at, sizeof w);
  return w;
}

unsigned pair_of(unsigned char a, unsigned char b) { return unsigned{a} << 8 | b; }

}  // namespace

bool WindowIndex::add(std::string_view s) {
  if (s.size() < kWindow) return true;
  const std::size_t count = s.size() - kWindow + 1;
  if (capped_ || windows_ + count > kMaxWindows) {
    capped_ = true;
    return false;
  }
  for (std::size_t at = 0; at < count; ++at) insert(load(s, at));
  for (std::size_t i = 0; i < s.size(); ++i) {
    bytes_.set(static_cast<unsigned char>(s[i]));
    if (i + 1 < s.size())
      pairs_.set(pair_of(static_cast<unsigned char>(s[i]), static_cast<unsigned char>(s[i + 1])));
  }
  return true;
}

std::size_t WindowIndex::open_tail(std::string_view text) const {
  if (empty()) return 0;
  std::size_t k = 0;
  while (k < kWindow - 1 && k < text.size()) {
    const auto c = static_cast<unsigned char>(text[text.size() - 1 - k]);
    if (!bytes_[c]) break;
    if (k > 0 && !pairs_[pair_of(c, static_cast<unsigned char>(text[text.size() - k]))]) break;
    ++k;
  }
  return k;
}

bool WindowIndex::find(std::uint64_t w) const {
  if (w == 0) return has_zero_;
  if (capacity_ == 0) return false;
  const std::size_t mask = capacity_ - 1;
  for (std::size_t i = home(w);; i = (i + 1) & mask) {
    const auto v = slot(i);
    if (v == w) return true;
    if (v == 0) return false;
  }
}

// Fibonacci hashing: the top bits of the product spread neighbouring texts over the table.
std::size_t WindowIndex::home(std::uint64_t w) const {
  return static_cast<std::size_t>((w * 0x9e3779b97f4a7c15ULL) >> (64 - capacity_bits_));
}

void WindowIndex::insert(std::uint64_t w) {
  if (capacity_ == 0) grow();
  if (find(w)) return;
  if (w == 0) {
    has_zero_ = true;
  } else {
    if ((windows_ + 1) * 2 > capacity_) grow();
    const std::size_t mask = capacity_ - 1;
    auto i = home(w);
    while (slot(i) != 0) i = (i + 1) & mask;
    set_slot(i, w);
  }
  set_filter_bits(w);
  ++windows_;
}

// Doubles the table (load stays at most one half) and rebuilds the filter at its new size; the
// old buffers are zeroed as they go.
void WindowIndex::grow() {
  const unsigned bits = std::max<unsigned>(kMinCapacityBits, capacity_bits_ + 1);
  SecretBytes old = std::move(table_);
  const std::size_t old_capacity = capacity_;
  capacity_bits_ = bits;
  capacity_ = std::size_t{1} << bits;
  table_ = SecretBytes(capacity_ * sizeof(std::uint64_t));
  filter_bits_ = std::clamp(bits + 3, kMinFilterBits, kMaxFilterBits);
  filter_ = SecretBytes((std::size_t{1} << filter_bits_) / 8);
  if (has_zero_) set_filter_bits(0);
  const std::size_t mask = capacity_ - 1;
  for (std::size_t j = 0; j < old_capacity; ++j) {
    std::uint64_t w;
    std::memcpy(&w, old.data() + j * sizeof w, sizeof w);
    if (w == 0) continue;
    auto i = home(w);
    while (slot(i) != 0) i = (i + 1) & mask;
    set_slot(i, w);
    set_filter_bits(w);
  }
}

void WindowIndex::set_filter_bits(std::uint64_t w) {
  const auto h = mix(w);
  const std::uint64_t mask = (std::uint64_t{1} << filter_bits_) - 1;
  for (const std::uint64_t i : {h & mask, (h >> 32) & mask})
    filter_.data()[i >> 3] |= static_cast<std::uint8_t>(1u << (i & 7));
}

std::uint64_t WindowIndex::slot(std::size_t i) const {
  std::uint64_t w;
  std::memcpy(&w, table_.data() + i * sizeof w, sizeof w);
  return w;
}

void WindowIndex::set_slot(std::size_t i, std::uint64_t w) {
  std::memcpy(table_.data() + i * sizeof w, &w, sizeof w);
}

}  // namespace takosumi::redaction
