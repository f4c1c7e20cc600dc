#include "runner/secret_set.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace takosumi::runner {
namespace {

// Lines shorter than this are too likely to occur in ordinary output ("-----END", "}", a short
// word) to be redacted on their own; the whole value still is.
constexpr std::size_t kMinLineVariant = 16;

// "-----BEGIN CERTIFICATE-----" names a format, not a secret: redacting it everywhere would only
// hide which kind of block a log shows.
bool is_pem_armor(std::string_view line) {
  return line.starts_with("-----BEGIN ") || line.starts_with("-----END ");
}

// A scratch copy of secret text, wiped when it goes. Capacity is reserved up front so that
// appending never leaves an unwiped copy behind in a freed buffer.
class ScratchText {
 public:
  explicit ScratchText(std::size_t capacity) { text_.reserve(capacity); }
  ~ScratchText() {
    text_.resize(text_.capacity());
    sodium_memzero(text_.data(), text_.size());
  }
  ScratchText(const ScratchText&) = delete;
  ScratchText& operator=(const ScratchText&) = delete;
  std::string& text() { return text_; }

 private:
  std::string text_;
};

void append_unicode_escape(std::string& out, unsigned code) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xf];
}

constexpr std::string_view kLineSeparator = "\xe2\x80\xa8";       // U+2028 in UTF-8
constexpr std::string_view kParagraphSeparator = "\xe2\x80\xa9";  // U+2029 in UTF-8

// The value as it appears inside a JSON string. html_safe adds what Go's encoding/json (and so
// `tofu show -json`) also escapes: <, >, & and U+2028/U+2029.

void json_escape(std::string_view value, bool html_safe, std::string& out) {
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (html_safe && (c == '<' || c == '>' || c == '&'))) {
      append_unicode_escape(out, c);
    } else if (html_safe && (value.substr(i, 3) == kLineSeparator ||
                             value.substr(i, 3) == kParagraphSeparator)) {
      append_unicode_escape(out, value.substr(i, 3) == kLineSeparator ? 0x2028 : 0x2029);
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
}

std::size_t pair_of(std::string_view text, std::size_t i) {
  return static_cast<unsigned char>(text[i]) << 8 | static_cast<unsigned char>(text[i + 1]);
}

// Each line of a match becomes one marker; its line breaks stay so line counts never change.
void append_markers(std::string& out, std::string_view match) {
  std::size_t start = 0;
  while (true) {
    const auto nl = match.find('\n', start);
    const auto line = match.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (!line.empty()) out += kRedactionMarker;
    if (nl == std::string_view::npos) return;
    out += '\n';
    start = nl + 1;
  }
}

}  // namespace

bool SecretSet::add(std::string_view value) {
  if (value.size() < kMinRedactedLength) return false;
  std::unique_lock lock(mutex_);
  bool stored_any = store(value);
  for (const bool html_safe : {false, true}) {
    ScratchText escaped(value.size() * 6);
    json_escape(value, html_safe, escaped.text());
    stored_any |= store(escaped.text());
  }
  if (value.find('\n') != std::string_view::npos) {
    ScratchText lf(value.size());
    for (std::size_t i = 0; i < value.size(); ++i)
      if (!(value[i] == '\r' && i + 1 < value.size() && value[i + 1] == '\n'))
        lf.text() += value[i];
    stored_any |= store(lf.text());
    for (std::size_t start = 0; start < value.size();) {
      auto end = std::min(value.find('\n', start), value.size());
      auto line = value.substr(start, end - start);
      while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.size() >= kMinLineVariant && !is_pem_armor(line)) stored_any |= store(line);
      start = end + 1;
    }
  }
  if (stored_any) ++values_;
  return true;
}

std::size_t SecretSet::size() const {
  std::shared_lock lock(mutex_);
  return values_;
}

bool SecretSet::empty() const { return size() == 0; }

std::size_t SecretSet::max_length() const {
  std::shared_lock lock(mutex_);
  return max_length_;
}

std::string SecretSet::redact(std::string_view text) const {
  std::shared_lock lock(mutex_);
  return scan(text, Scan::whole).out;
}

bool SecretSet::contains_secret(std::string_view text) const {
  std::shared_lock lock(mutex_);
  return scan(text, Scan::find_only).found;
}

PrefixRedaction SecretSet::redact_prefix(std::string_view text) const {
  std::shared_lock lock(mutex_);
  auto r = scan(text, Scan::prefix);
  return PrefixRedaction{std::move(r.out), r.consumed};
}

SecretSet::ScanResult SecretSet::scan(std::string_view text, Scan mode) const {
  ScanResult r;
  if (mode != Scan::find_only) r.out.reserve(text.size());
  const std::size_t n = text.size();
  std::size_t copied = 0;  // text[copied, i) is still to be copied verbatim
  std::size_t i = 0;
  while (i < n) {
    const auto& bucket = by_first_byte_[static_cast<unsigned char>(text[i])];
    if (bucket.empty() || (n - i >= 2 && !first_pairs_[pair_of(text, i)])) {
      ++i;
      continue;
    }
    std::size_t match = 0;
    bool held = false;
    for (const auto index : bucket) {
      const auto s = strings_[index].reveal_as_string();
      if (s.size() > n - i) {
        // A longer string that may still complete must win over any shorter match here.
        if (mode == Scan::prefix && s.starts_with(text.substr(i))) {
          held = true;
          break;
        }
        continue;
      }
      if (std::memcmp(text.data() + i, s.data(), s.size()) == 0) {
        match = s.size();
        break;
      }
    }
    if (held) break;
    if (match == 0) {
      ++i;
      continue;
    }
    if (mode == Scan::find_only) {
      r.found = true;
      return r;
    }
    r.out.append(text.substr(copied, i - copied));
    append_markers(r.out, text.substr(i, match));
    i += match;
    copied = i;
  }
  if (mode != Scan::find_only) r.out.append(text.substr(copied, i - copied));
  r.consumed = i;
  return r;
}

bool SecretSet::stored(std::string_view variant) const {
  const auto& bucket = by_first_byte_[static_cast<unsigned char>(variant.front())];
  return std::any_of(bucket.begin(), bucket.end(), [&](std::uint32_t index) {
    return strings_[index].reveal_as_string() == variant;
  });
}

bool SecretSet::store(std::string_view variant) {
  if (variant.size() < kMinRedactedLength || stored(variant)) return false;
  const auto index = static_cast<std::uint32_t>(strings_.size());
  strings_.push_back(SecretBytes::from_string(variant));
  auto& bucket = by_first_byte_[static_cast<unsigned char>(variant.front())];
  const auto at = std::find_if(bucket.begin(), bucket.end(), [&](std::uint32_t other) {
    return strings_[other].size() < variant.size();
  });
  bucket.insert(at, index);
  first_pairs_.set(pair_of(variant, 0));
  max_length_ = std::max(max_length_, variant.size());
  return true;
}

}  // namespace takosumi::runner
