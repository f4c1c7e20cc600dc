#include "redaction/secret_set.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>

#include "redaction/scratch_text.hpp"

namespace takosumi::redaction {
namespace {

// Lines shorter than this are too likely to occur in ordinary output ("-----END", "}", a short
// word) to be redacted on their own; the whole value still is.
constexpr std::size_t kMinLineVariant = 16;

// "-----BEGIN CERTIFICATE-----" names a format, not a secret: redacting it everywhere would only
// hide which kind of block a log shows.
bool is_pem_armor(std::string_view line) {
  return line.starts_with("-----BEGIN ") || line.starts_with("-----END ");
}

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

// The bit of the heads filter for the four bytes at text[i].
std::size_t head_bit(std::string_view text, std::size_t i, unsigned bits) {
  std::uint32_t head;
  std::memcpy(&head, text.data() + i, sizeof head);
  return (head * 0x9e3779b1u) >> (32 - bits);
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

// text[0, upto) with each span in it replaced by markers; spans ending past upto are left out
// (they start at or after upto: see hold_from).
template <class Spans>
std::string render(std::string_view text, const Spans& spans, std::size_t upto) {
  std::string out;
  out.reserve(upto);
  std::size_t copied = 0;
  for (const auto& span : spans) {
    if (span.end > upto) break;
    out.append(text.substr(copied, span.begin - copied));
    append_markers(out, text.substr(span.begin, span.end - span.begin));
    copied = span.end;
  }
  out.append(text.substr(copied, upto - copied));
  return out;
}

bool has_whitespace(std::string_view s) {
  return s.find_first_of(" \t\n\r\v\f") != std::string_view::npos;
}

using EachForm = std::function<void(SecretForm, std::string_view)>;

// The forms of a multi-line value: with CRLF turned to LF, and each long line on its own.
void for_each_line_form(std::string_view value, const EachForm& each) {
  ScratchText lf(value.size());
  for (std::size_t i = 0; i < value.size(); ++i)
    if (!(value[i] == '\r' && i + 1 < value.size() && value[i + 1] == '\n')) lf.text() += value[i];
  each(SecretForm::value, lf.text());
  for (std::size_t start = 0; start < value.size();) {
    auto end = std::min(value.find('\n', start), value.size());
    auto line = value.substr(start, end - start);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() >= kMinLineVariant && !is_pem_armor(line)) each(SecretForm::line, line);
    start = end + 1;
  }
}

// The whitespace-free words of at least kMinLineVariant bytes in the lines of value, PEM armour
// lines left out: "Bearer <jwt>", a passphrase with a long word. Their pieces are not ordinary
// words, and half of one split off by a partial-line flush must still be caught.
void for_each_long_word(std::string_view value, const std::function<void(std::string_view)>& each) {
  constexpr std::string_view kSpace = " \t\n\r\v\f";
  for (std::size_t start = 0; start < value.size();) {
    const auto end = std::min(value.find('\n', start), value.size());
    const auto line = value.substr(start, end - start);
    start = end + 1;
    if (is_pem_armor(line)) continue;
    for (auto at = line.find_first_not_of(kSpace); at != std::string_view::npos;) {
      const auto stop = std::min(line.find_first_of(kSpace, at), line.size());
      if (stop - at >= kMinLineVariant) each(line.substr(at, stop - at));
      at = line.find_first_not_of(kSpace, stop);
    }
  }
}

// Every form SecretSet::add stores besides the value itself.
void for_each_variant(std::string_view value, const EachForm& each) {
  for (const bool html_safe : {false, true}) {
    ScratchText escaped(value.size() * 6);
    json_escape(value, html_safe, escaped.text());
    each(SecretForm::json_escaped, escaped.text());
  }
  if (value.find('\n') != std::string_view::npos) for_each_line_form(value, each);
  for_each_encoding(value, each);
}

// A HashDigest kept in zeroing memory, and read back.
SecretBytes pack(const HashDigest& digest) {
  SecretBytes out(2 * sizeof(std::uint64_t));
  std::memcpy(out.data(), &digest.hash, sizeof digest.hash);
  std::memcpy(out.data() + sizeof digest.hash, &digest.power, sizeof digest.power);
  return out;
}

HashDigest unpack(const SecretBytes& packed) {
  HashDigest digest;
  std::memcpy(&digest.hash, packed.data(), sizeof digest.hash);
  std::memcpy(&digest.power, packed.data() + sizeof digest.hash, sizeof digest.power);
  return digest;
}

}  // namespace

// One pass over a text. The text's hashes are computed only when a stored string longer than
// kComparedPrefix agrees with it on those bytes; the work is added to the set's total at the end.
struct SecretSet::Scan {
  Scan(const SecretSet& set, std::string_view text) : set(set), text(text) {}
  ~Scan() { set.work_.fetch_add(work, std::memory_order_relaxed); }
  Scan(const Scan&) = delete;
  Scan& operator=(const Scan&) = delete;

  const TextHashes& hashes() {
    if (!text_hashes) {
      text_hashes.emplace(set.hash_, text);
      work += text.size();
    }
    return *text_hashes;
  }

  const SecretSet& set;
  std::string_view text;
  std::optional<TextHashes> text_hashes;
  std::uint64_t work = 0;
};

bool SecretSet::add(std::string_view value) {
  if (value.size() < kMinRedactedLength) return false;
  std::unique_lock lock(mutex_);
  // Pieces of prose are ordinary words: a value with whitespace has windows only for its long
  // words, and its JSON and percent forms, which spell the same words ("BEGIN+RSA+PRIVATE+KEY"),
  // have none. Its encodings and its whitespace-free lines (a PEM body) do.
  const bool prose = has_whitespace(value);
  bool stored_any = store(value, SecretForm::value, !prose);
  for_each_variant(value, [&](SecretForm form, std::string_view variant) {
    const bool opaque = form == SecretForm::base64 || form == SecretForm::hex || form == SecretForm::line;
    stored_any |= store(variant, form, (opaque || !prose) && !has_whitespace(variant));
  });
  if (prose) for_each_long_word(value, [&](std::string_view word) { windows_.add(word); });
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

bool SecretSet::windows_capped() const {
  std::shared_lock lock(mutex_);
  return windows_.capped();
}

std::string SecretSet::redact(std::string_view text) const {
  std::shared_lock lock(mutex_);
  Scan scan(*this, text);
  return render(text, matches(scan), text.size());
}

bool SecretSet::contains_secret(std::string_view text) const { return find_form(text).has_value(); }

std::optional<SecretForm> SecretSet::find_form(std::string_view text) const {
  std::shared_lock lock(mutex_);
  Scan scan(*this, text);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (may_begin_at(text, i))
      if (const auto index = longest_at(scan, i)) return strings_[*index].form;
  return std::nullopt;
}

PrefixRedaction SecretSet::redact_prefix(std::string_view text) const {
  std::shared_lock lock(mutex_);
  Scan scan(*this, text);
  const auto spans = matches(scan);
  const auto hold = hold_from(scan, spans);
  return PrefixRedaction{render(text, spans, hold), hold};
}

// Most positions begin no stored string: one bit of the heads filter says so. Kept small so
// that it is inlined into the scans.
bool SecretSet::may_begin_at(std::string_view text, std::size_t at) const {
  if (text.size() - at < kMinRedactedLength) return false;
  const auto bit = head_bit(text, at, kHeadBits);
  return (heads_.data()[bit >> 3] >> (bit & 7)) & 1;
}

// Every position is tried (not only those after the previous match), so a secret beginning
// inside another one is covered too; the union is what is replaced.
std::vector<SecretSet::Span> SecretSet::matches(Scan& scan) const {
  std::vector<Span> spans;
  const auto cover = [&](std::size_t begin, std::size_t end) {
    if (!spans.empty() && begin < spans.back().end)
      spans.back().end = std::max(spans.back().end, end);
    else
      spans.push_back(Span{begin, end});
  };
  const auto text = scan.text;
  const std::size_t n = text.size();
  const std::size_t last_window = windows_.empty() || n < WindowIndex::kWindow ? 0 : n - WindowIndex::kWindow + 1;
  for (std::size_t i = 0; i < n; ++i) {
    if (may_begin_at(text, i))
      if (const auto index = longest_at(scan, i)) cover(i, i + strings_[*index].text.size());
    if (i < last_window && windows_.contains_at(text, i)) cover(i, i + WindowIndex::kWindow);
  }
  return spans;
}

std::optional<std::uint32_t> SecretSet::longest_at(Scan& scan, std::size_t at) const {
  const auto& bucket = by_first_byte_[static_cast<unsigned char>(scan.text[at])];
  const std::size_t rest = scan.text.size() - at;
  if (bucket.empty() || rest < kMinRedactedLength) return std::nullopt;
  for (const auto index : bucket)
    if (strings_[index].text.size() <= rest && equal_at(scan, at, strings_[index])) return index;
  return std::nullopt;
}

// Byte by byte on at most kComparedPrefix bytes, so crafted text that agrees with a long secret
// until its last byte costs no more than any other; past them the keyed hash decides in O(1). Once
// the text's hashes exist, the hash alone decides (a collision only redacts more).
bool SecretSet::equal_at(Scan& scan, std::size_t at, const Stored& stored) const {
  const auto s = stored.text.reveal_as_string();
  if (s.size() <= kComparedPrefix || !scan.text_hashes) {
    const auto head = std::min(s.size(), kComparedPrefix);
    scan.work += head;
    if (std::memcmp(scan.text.data() + at, s.data(), head) != 0) return false;
    if (s.size() == head) return true;
  }
  ++scan.work;
  return scan.hashes().equals(at, s.size(), unpack(stored.digest));
}

std::size_t SecretSet::hold_from(Scan& scan, const std::vector<Span>& spans) const {
  const std::size_t n = scan.text.size();
  std::size_t hold = n - windows_.open_tail(scan.text);
  const std::size_t reach = max_length_ > 0 ? std::min(n, max_length_ - 1) : 0;
  for (std::size_t i = n - reach; i < hold; ++i)
    if (starts_a_stored_string(scan, i)) {
      hold = i;
      break;
    }
  // A match reaching into the held text may still grow: it is held whole.
  for (auto it = spans.rbegin(); it != spans.rend() && it->end > hold; ++it)
    hold = std::min(hold, it->begin);
  return hold;
}

// text[at...] may be the start of a secret that continues in text not seen yet: it is shorter
// than a stored string and agrees with it (on at most kComparedPrefix bytes: holding more than
// needed is safe, comparing more would make crafted text cost the length of the secret).
bool SecretSet::starts_a_stored_string(Scan& scan, std::size_t at) const {
  const auto rest = scan.text.substr(at);
  if (rest.size() >= 2 && !first_pairs_[pair_of(rest, 0)]) return false;
  const auto head = std::min(rest.size(), kComparedPrefix);
  for (const auto index : by_first_byte_[static_cast<unsigned char>(rest.front())]) {
    const auto s = strings_[index].text.reveal_as_string();
    if (s.size() <= rest.size()) return false;  // longest first: no longer one follows
    scan.work += head;
    if (std::memcmp(s.data(), rest.data(), head) == 0) return true;
  }
  return false;
}

bool SecretSet::stored(std::string_view variant) const {
  const auto& bucket = by_first_byte_[static_cast<unsigned char>(variant.front())];
  return std::any_of(bucket.begin(), bucket.end(), [&](std::uint32_t index) {
    return strings_[index].text.reveal_as_string() == variant;
  });
}

bool SecretSet::store(std::string_view variant, SecretForm form, bool windows) {
  if (variant.size() < kMinRedactedLength || stored(variant)) return false;
  const auto index = static_cast<std::uint32_t>(strings_.size());
  strings_.push_back(Stored{SecretBytes::from_string(variant), form,
                            variant.size() > kComparedPrefix ? pack(hash_.digest(variant)) : SecretBytes()});
  auto& bucket = by_first_byte_[static_cast<unsigned char>(variant.front())];
  const auto at = std::find_if(bucket.begin(), bucket.end(), [&](std::uint32_t other) {
    return strings_[other].text.size() < variant.size();
  });
  bucket.insert(at, index);
  first_pairs_.set(pair_of(variant, 0));
  const auto bit = head_bit(variant, 0, kHeadBits);
  heads_.data()[bit >> 3] |= static_cast<std::uint8_t>(1u << (bit & 7));
  max_length_ = std::max(max_length_, variant.size());
  if (windows) windows_.add(variant);
  return true;
}

}  // namespace takosumi::redaction
