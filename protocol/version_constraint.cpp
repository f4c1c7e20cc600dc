#include "protocol/version_constraint.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "common/error_codes.hpp"

namespace takosumi::protocol {
namespace {

constexpr std::size_t kMaxText = 256;
constexpr std::size_t kMaxSegments = 8;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_ident_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '~' ||
         c == '.';
}

// Go's \s, as go-version's constraint pattern allows around each part.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Dot-separated identifiers, none empty.
bool valid_identifiers(std::string_view s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  if (s.find("..") != std::string_view::npos) return false;
  return std::all_of(s.begin(), s.end(), is_ident_char);
}

// Text from a module or a request as a message may show it: it cannot break or forge a line.
std::string shown(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return text.size() > 64 ? out + "..." : out;
}

std::unexpected<Error> bad_version(std::string_view text, std::string_view why) {
  return fail(errc::kInvalidArgument, "\"" + shown(text) + "\" is not a version: " +
                                          std::string(why));
}

// Semver precedence of two prerelease strings.
int compare_prerelease(std::string_view a, std::string_view b) {
  while (true) {
    const auto ea = a.find('.'), eb = b.find('.');
    const std::string_view pa = a.substr(0, ea), pb = b.substr(0, eb);
    const bool na = !pa.empty() && std::all_of(pa.begin(), pa.end(), is_digit);
    const bool nb = !pb.empty() && std::all_of(pb.begin(), pb.end(), is_digit);
    int c = 0;
    if (na && nb) {
      const auto la = pa.find_first_not_of('0'), lb = pb.find_first_not_of('0');
      const std::string_view ta = la == std::string_view::npos ? "" : pa.substr(la);
      const std::string_view tb = lb == std::string_view::npos ? "" : pb.substr(lb);
      c = ta.size() != tb.size() ? (ta.size() < tb.size() ? -1 : 1) : ta.compare(tb);
    } else if (na != nb) {
      c = na ? -1 : 1;
    } else {
      c = pa.compare(pb);
    }
    if (c != 0) return c < 0 ? -1 : 1;
    if (ea == std::string_view::npos || eb == std::string_view::npos)
      return ea == eb ? 0 : (ea == std::string_view::npos ? -1 : 1);
    a.remove_prefix(ea + 1);
    b.remove_prefix(eb + 1);
  }
}

// `~> 1.2.3`: the same leading parts and a last given part at least the constraint's.
bool pessimistic(const TofuVersion& v, const TofuVersion& c) {
  if (compare(v, c) < 0) return false;
  const std::size_t n = c.specified;
  if (n > v.segments.size()) return false;
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (v.segments[i] != c.segments[i]) return false;
  return v.segments[n - 1] >= c.segments[n - 1];
}

bool check(const VersionConstraint::Part& p, const TofuVersion& v) {
  const int cmp = compare(v, p.version);
  if (p.op == "=") return cmp == 0;
  if (p.op == "!=") return cmp != 0;
  if (p.op == "~>") return pessimistic(v, p.version);
  if (p.op == ">") return cmp > 0;
  if (p.op == ">=") return cmp >= 0;
  if (p.op == "<") return cmp < 0;
  return cmp <= 0;  // "<="
}

}  // namespace

int compare(const TofuVersion& a, const TofuVersion& b) {
  const std::size_t n = std::max(a.segments.size(), b.segments.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t x = i < a.segments.size() ? a.segments[i] : 0;
    const std::int64_t y = i < b.segments.size() ? b.segments[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  if (a.prerelease.empty() || b.prerelease.empty())
    return a.prerelease.empty() == b.prerelease.empty() ? 0 : (a.prerelease.empty() ? 1 : -1);
  return compare_prerelease(a.prerelease, b.prerelease);
}

Result<TofuVersion> parse_tofu_version(std::string_view text) {
  if (text.size() > kMaxText) return bad_version(text.substr(0, 64), "longer than 256 bytes");
  TofuVersion v;
  v.text = std::string(text);
  std::string_view s = text;
  if (!s.empty() && s.front() == 'v') s.remove_prefix(1);
  if (const auto plus = s.find('+'); plus != std::string_view::npos) {
    if (!valid_identifiers(s.substr(plus + 1))) return bad_version(text, "bad build metadata");
    s = s.substr(0, plus);
  }
  if (const auto dash = s.find('-'); dash != std::string_view::npos) {
    v.prerelease = std::string(s.substr(dash + 1));
    if (!valid_identifiers(v.prerelease)) return bad_version(text, "bad prerelease");
    s = s.substr(0, dash);
  }
  while (true) {
    const auto dot = s.find('.');
    const std::string_view part = s.substr(0, dot);
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || n < 0)
      return bad_version(text, "expected numbers separated by dots, such as 1.9.0");
    v.segments.push_back(n);
    if (v.segments.size() > kMaxSegments) return bad_version(text, "too many numbers");
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  v.specified = v.segments.size();
  while (v.segments.size() < 3) v.segments.push_back(0);
  return v;
}

Result<VersionConstraint> parse_version_constraint(std::string_view text) {
  if (text.size() > kMaxText)
    return fail(errc::kInvalidArgument, "a version constraint is at most 256 bytes");
  VersionConstraint c;
  c.text = std::string(text);
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    std::string_view part = trim(rest.substr(0, comma));
    // Longest operator first: ">=" before ">".
    static constexpr std::array<std::string_view, 7> kOps{"~>", ">=", "<=", "!=", ">", "<", "="};
    std::string op = "=";
    for (std::string_view candidate : kOps)
      if (part.starts_with(candidate)) {
        op = std::string(candidate);
        part = trim(part.substr(candidate.size()));
        break;
      }
    auto v = parse_tofu_version(part);
    if (!v)
      return fail(errc::kInvalidArgument,
                  "\"" + shown(text) + "\" is not a version constraint (such as \">= 1.9, "
                  "< 2.0\" or \"~> 1.10.0\"): " + v.error().message);
    if (!v->prerelease.empty())
      return fail(errc::kInvalidArgument,
                  "\"" + shown(text) + "\": a version constraint cannot name a prerelease (" +
                      shown(part) + "), as OpenTofu's required_version cannot");
    c.parts.push_back({std::move(op), std::move(*v)});
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return c;
}

bool satisfies(const TofuVersion& v, const VersionConstraint& c) {
  TofuVersion release = v;
  release.prerelease.clear();
  return std::all_of(c.parts.begin(), c.parts.end(),
                     [&](const VersionConstraint::Part& p) { return check(p, release); });
}

}  // namespace takosumi::protocol
