#include "runner/policy/hcl_lexer.hpp"

#include <array>
#include <cstdint>

#include "common/error_codes.hpp"

namespace takosumi::runner {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Bytes of multi-byte UTF-8 characters count as identifier characters: a superset of HCL's
// Unicode identifiers, and what HCL refuses OpenTofu refuses too, so nothing is hidden by it.
bool is_ident_start(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}

bool is_ident_continue(char c) { return is_ident_start(c) || is_digit(c) || c == '-'; }

// Go's unicode.IsSpace, which hclsyntax applies (bytes.TrimSpace) to a heredoc line before it
// compares it with the marker. Missing one here would let a module end a heredoc where OpenTofu
// sees code and this scanner still sees text.
constexpr std::array<std::string_view, 25> kSpaces{
    "\t",           "\n",           "\v",           "\f",           "\r",
    " ",            "\xC2\x85",     "\xC2\xA0",     "\xE1\x9A\x80", "\xE2\x80\x80",
    "\xE2\x80\x81", "\xE2\x80\x82", "\xE2\x80\x83", "\xE2\x80\x84", "\xE2\x80\x85",
    "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89", "\xE2\x80\x8A",
    "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"};

std::size_t leading_space(std::string_view s) {
  for (auto sp : kSpaces)
    if (s.starts_with(sp)) return sp.size();
  return 0;
}

std::size_t trailing_space(std::string_view s) {
  for (auto sp : kSpaces)
    if (s.ends_with(sp)) return sp.size();
  return 0;
}

std::string_view trim_space(std::string_view s) {
  while (std::size_t n = leading_space(s)) s.remove_prefix(n);
  while (std::size_t n = trailing_space(s)) s.remove_suffix(n);
  return s;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool parse_hex(std::string_view digits, std::uint32_t& out) {
  out = 0;
  for (char c : digits) {
    int v = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (v < 0) return false;
    out = out * 16 + static_cast<std::uint32_t>(v);
  }
  return out <= 0x10FFFF;
}

// One escape starting at s[i] == '\\'; returns how many bytes it used.
std::size_t decode_escape(std::string_view s, std::size_t i, std::string& out) {
  if (i + 1 >= s.size()) {
    out += '\\';
    return 1;
  }
  const char e = s[i + 1];
  switch (e) {
    case 'n': out += '\n'; return 2;
    case 'r': out += '\r'; return 2;
    case 't': out += '\t'; return 2;
    case '"': out += '"'; return 2;
    case '\\': out += '\\'; return 2;
    default: break;
  }
  const std::size_t width = e == 'u' ? 4 : e == 'U' ? 8 : 0;
  std::uint32_t cp = 0;
  if (width != 0 && i + 2 + width <= s.size() && parse_hex(s.substr(i + 2, width), cp)) {
    append_utf8(out, cp);
    return 2 + width;
  }
  out += s.substr(i, 2);
  return 2;
}

}  // namespace

HclLexer::HclLexer(std::string_view source) : src_(source) {
  if (src_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
}

Result<HclToken> HclLexer::next() { return scan(0); }

std::unexpected<Error> HclLexer::error(int line, std::string_view what) const {
  return fail(errc::kInvalidArgument, "line " + std::to_string(line) + ": " + std::string(what));
}

HclToken HclLexer::take(HclTokenKind kind, std::size_t length) {
  HclToken t{kind, src_.substr(pos_, length), line_};
  pos_ += length;
  return t;
}

void HclLexer::skip_blank() {
  while (pos_ < src_.size()) {
    const char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '#' || src_.substr(pos_, 2) == "//") {
      // The newline stays: it ends the attribute the comment follows.
      const auto eol = src_.find('\n', pos_);
      pos_ = eol == std::string_view::npos ? src_.size() : eol;
    } else {
      return;
    }
  }
}

Status HclLexer::skip_block_comment() {
  const auto end = src_.find("*/", pos_ + 2);
  if (end == std::string_view::npos) return error(line_, "unterminated /* comment");
  for (std::size_t i = pos_; i < end; ++i)
    if (src_[i] == '\n') ++line_;
  pos_ = end + 2;
  return {};
}

Result<HclToken> HclLexer::scan(int depth) {
  for (;;) {
    skip_blank();
    if (pos_ >= src_.size()) return HclToken{HclTokenKind::eof, {}, line_};
    if (src_.substr(pos_, 2) != "/*") break;
    TAKOSUMI_TRY(skip_block_comment());
  }
  const char c = src_[pos_];
  const std::string_view rest = src_.substr(pos_);
  if (c == '\n') {
    auto t = take(HclTokenKind::newline, 1);
    ++line_;
    return t;
  }
  if (c == '"') return scan_quoted(depth);
  if (rest.starts_with("<<")) {
    std::size_t p = rest.starts_with("<<-") ? 3 : 2;
    const std::size_t marker_begin = p;
    if (p < rest.size() && is_ident_start(rest[p])) {
      while (p < rest.size() && is_ident_continue(rest[p])) ++p;
      const auto marker = rest.substr(marker_begin, p - marker_begin);
      if (rest.substr(p, 1) == "\n") return scan_heredoc(depth, p + 1, marker);
      if (rest.substr(p, 2) == "\r\n") return scan_heredoc(depth, p + 2, marker);
    }
  }
  if (is_ident_start(c)) return scan_word(HclTokenKind::identifier);
  if (is_digit(c)) return scan_word(HclTokenKind::number);
  switch (c) {
    case '{': return take(HclTokenKind::open_brace, 1);
    case '}': return take(HclTokenKind::close_brace, 1);
    case '[': return take(HclTokenKind::open_bracket, 1);
    case ']': return take(HclTokenKind::close_bracket, 1);
    case '(': return take(HclTokenKind::open_paren, 1);
    case ')': return take(HclTokenKind::close_paren, 1);
    case ',': return take(HclTokenKind::comma, 1);
    case '?': return take(HclTokenKind::question, 1);
    case '=':
      if (rest.starts_with("==") || rest.starts_with("=>")) return take(HclTokenKind::op, 2);
      return take(HclTokenKind::equals, 1);
    case ':':
      return rest.starts_with("::") ? take(HclTokenKind::double_colon, 2)
                                    : take(HclTokenKind::colon, 1);
    case '.':
      return rest.starts_with("...") ? take(HclTokenKind::op, 3) : take(HclTokenKind::dot, 1);
    default: break;
  }
  for (std::string_view two : {"!=", ">=", "<=", "&&", "||"})
    if (rest.starts_with(two)) return take(HclTokenKind::op, 2);
  if (std::string_view("+-*/%<>!&|~^;`'").find(c) != std::string_view::npos)
    return take(HclTokenKind::op, 1);
  return error(line_, "unexpected character");
}

HclToken HclLexer::scan_word(HclTokenKind kind) {
  std::size_t end = pos_ + 1;
  if (kind == HclTokenKind::identifier) {
    while (end < src_.size() && is_ident_continue(src_[end])) ++end;
    return take(kind, end - pos_);
  }
  for (;;) {
    const auto rest = src_.substr(end);
    if (!rest.empty() && is_digit(rest[0])) {
      ++end;
    } else if (rest.size() > 1 && rest[0] == '.' && is_digit(rest[1])) {
      end += 2;
    } else if (rest.size() > 1 && (rest[0] == 'e' || rest[0] == 'E') &&
               (is_digit(rest[1]) ||
                (rest.size() > 2 && (rest[1] == '+' || rest[1] == '-') && is_digit(rest[2])))) {
      end += 2;
    } else {
      return take(kind, end - pos_);
    }
  }
}

Result<HclToken> HclLexer::scan_quoted(int depth) {
  const std::size_t begin = pos_;
  const int begin_line = line_;
  bool has_template = false;
  ++pos_;
  while (pos_ < src_.size()) {
    const char c = src_[pos_];
    const std::string_view rest = src_.substr(pos_);
    if (c == '"') {
      ++pos_;
      return HclToken{HclTokenKind::string, src_.substr(begin, pos_ - begin), begin_line,
                      has_template};
    }
    if (c == '\n' || c == '\r') return error(line_, "newline in a quoted string");
    if (c == '\\') {
      if (rest.size() < 2 || rest[1] == '\n' || rest[1] == '\r')
        return error(line_, "unterminated string escape");
      pos_ += 2;
    } else if ((c == '$' || c == '%') && rest.substr(1, 1) == "{") {
      has_template = true;
      pos_ += 2;
      TAKOSUMI_TRY(skip_template_sequence(depth + 1));
    } else if ((c == '$' || c == '%') && rest.size() > 2 && rest[1] == c && rest[2] == '{') {
      pos_ += 3;  // $${ and %%{ are literal text
    } else {
      ++pos_;
    }
  }
  return error(begin_line, "unterminated string");
}

Result<HclToken> HclLexer::scan_heredoc(int depth, std::size_t opener_length,
                                        std::string_view marker) {
  const std::size_t begin = pos_;
  const int begin_line = line_;
  pos_ += opener_length;
  ++line_;
  bool line_start = true;
  while (pos_ < src_.size()) {
    if (line_start) {
      // Only a whole line can end the heredoc; HCL also wants its newline.
      const auto eol = src_.find('\n', pos_);
      if (eol != std::string_view::npos && trim_space(src_.substr(pos_, eol - pos_)) == marker) {
        pos_ = eol;  // the newline is a token of its own, as in hclsyntax
        return HclToken{HclTokenKind::heredoc, src_.substr(begin, pos_ - begin), begin_line, true};
      }
      line_start = false;
    }
    const std::string_view rest = src_.substr(pos_);
    const char c = rest[0];
    if (c == '\n') {
      ++line_;
      ++pos_;
      line_start = true;
    } else if ((c == '$' || c == '%') && rest.substr(1, 1) == "{") {
      pos_ += 2;
      TAKOSUMI_TRY(skip_template_sequence(depth + 1));
    } else if ((c == '$' || c == '%') && rest.size() > 2 && rest[1] == c && rest[2] == '{') {
      pos_ += 3;
    } else {
      ++pos_;
    }
  }
  return error(begin_line, "unterminated heredoc (no line with only " + std::string(marker) + ")");
}

Status HclLexer::skip_template_sequence(int depth) {
  const int begin_line = line_;
  if (depth > kMaxHclNesting) return error(line_, "template sequences nested too deeply");
  int braces = 0;
  for (;;) {
    auto t = scan(depth);
    if (!t) return std::unexpected(t.error());
    if (t->kind == HclTokenKind::eof) return error(begin_line, "unterminated template sequence");
    if (t->kind == HclTokenKind::open_brace) ++braces;
    if (t->kind == HclTokenKind::close_brace && braces-- == 0) return {};
  }
}

std::string hcl_unquote(std::string_view quoted) {
  std::string_view s = quoted;
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto rest = s.substr(i);
    if (rest[0] == '\\') {
      i += decode_escape(s, i, out);
    } else if (rest.starts_with("$${") || rest.starts_with("%%{")) {
      out += rest.substr(1, 2);
      i += 3;
    } else {
      out += rest[0];
      ++i;
    }
  }
  return out;
}

}  // namespace takosumi::runner
