#include "redaction/credential_patterns.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "redaction/secret_set.hpp"

namespace takosumi::redaction {
namespace {

constexpr auto npos = std::string_view::npos;

// Compared with '-' read as '_', so "client-secret" and "X-Api-Key" count too.
constexpr std::array<std::string_view, 12> kSecretKeySuffixes = {
    "password", "passwd",     "pwd",        "secret",      "token",         "api_key",
    "apikey",   "access_key", "secret_key", "private_key", "client_secret", "credentials"};

// What OpenTofu prints instead of a value, and source references it quotes in diagnostics
// ("12:   password = var.db_password"): none of them is a secret.
constexpr std::array<std::string_view, 9> kNotSecretPrefixes = {
    "(sensitive", "<sensitive", "(known", "var.", "local.", "module.", "data.", "<<",
    kRedactionMarker};

// Minimum length of a Bearer/Basic token.
constexpr std::size_t kMinSchemeToken = 8;

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_quote(char c) { return c == '"' || c == '\''; }

bool is_key_char(char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; }

bool is_token_char(char c) {
  return is_alnum(c) || std::string_view("._~+/=-").find(c) != npos;
}

bool is_authority_end(char c) {
  return std::isspace(static_cast<unsigned char>(c)) ||
         std::string_view("/?#\"'<>`\\").find(c) != npos;
}

char fold(char c) {
  return c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return fold(x) == fold(y);
         });
}

std::size_t ifind(std::string_view text, std::string_view word, std::size_t from) {
  for (std::size_t i = from; i + word.size() <= text.size(); ++i)
    if (iequal(text.substr(i, word.size()), word)) return i;
  return npos;
}

std::size_t skip_spaces(std::string_view text, std::size_t i) {
  while (i < text.size() && is_space(text[i])) ++i;
  return i;
}

// Skips a quote closing a key: ", ' or a JSON-escaped \".
std::size_t skip_quote(std::string_view text, std::size_t i) {
  if (i < text.size() && is_quote(text[i])) return i + 1;
  if (text.substr(i, 2) == "\\\"") return i + 2;
  return i;
}

bool is_not_secret(std::string_view value) {
  if (value.empty() || value == "null") return true;
  return std::any_of(kNotSecretPrefixes.begin(), kNotSecretPrefixes.end(),
                     [&](std::string_view p) { return value.starts_with(p); });
}

bool has_secret_suffix(std::string_view key) {
  return std::any_of(kSecretKeySuffixes.begin(), kSecretKeySuffixes.end(), [&](std::string_view s) {
    return key.size() >= s.size() && iequal(key.substr(key.size() - s.size()), s);
  });
}

// "Basic authentication", "bearer Tokens": an ordinary word after the scheme name is prose, not
// a token. Tokens are random, so they have digits, symbols or capitals after the first letter.
bool is_plain_word(std::string_view token) {
  const bool letters = std::all_of(token.begin(), token.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0;
  });
  const auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  const bool rest_lower = std::none_of(token.begin() + 1, token.end(), upper);
  const bool all_upper = std::all_of(token.begin(), token.end(), upper);
  return letters && (rest_lower || all_upper);
}

void find_authorization(std::string_view line, std::vector<PatternMatch>& out) {
  constexpr std::string_view kWord = "authorization";
  for (auto pos = ifind(line, kWord, 0); pos != npos; pos = ifind(line, kWord, pos + 1)) {
    const auto colon = skip_spaces(line, skip_quote(line, pos + kWord.size()));
    if (colon >= line.size() || line[colon] != ':') continue;
    const auto value = skip_spaces(line, colon + 1);
    auto rest = line.substr(value);
    if (is_not_secret(rest.substr(skip_quote(rest, 0)))) continue;
    out.push_back({CredentialPattern::authorization_header, {value, line.size()}});
    return;
  }
}

void find_scheme_tokens(std::string_view line, std::vector<PatternMatch>& out) {
  for (const std::string_view scheme : {"bearer", "basic"}) {
    for (auto pos = ifind(line, scheme, 0); pos != npos; pos = ifind(line, scheme, pos + 1)) {
      if (pos > 0 && is_alnum(line[pos - 1])) continue;
      const auto after = pos + scheme.size();
      if (after >= line.size() || !is_space(line[after])) continue;
      const auto begin = skip_spaces(line, after);
      auto end = begin;
      while (end < line.size() && is_token_char(line[end])) ++end;
      const auto token = line.substr(begin, end - begin);
      if (token.size() < kMinSchemeToken || is_plain_word(token) || is_not_secret(token)) continue;
      out.push_back({CredentialPattern::scheme_token, {begin, end}});
    }
  }
}

void find_url_passwords(std::string_view line, std::vector<PatternMatch>& out) {
  for (auto pos = line.find("://"); pos != npos; pos = line.find("://", pos + 1)) {
    if (pos == 0 || !is_alnum(line[pos - 1])) continue;
    const auto begin = pos + 3;
    auto end = begin;
    while (end < line.size() && !is_authority_end(line[end])) ++end;
    // The userinfo ends at the authority's last '@' (an unencoded '@' in a password is common).
    const auto at = line.substr(begin, end - begin).rfind('@');
    if (at == npos) continue;
    const auto userinfo = line.substr(begin, at);
    if (userinfo.find(':') == npos || userinfo == kRedactionMarker) continue;
    out.push_back({CredentialPattern::url_password, {begin, begin + at}});
  }
}

// The value of a key/value pair starting at v: up to the closing quote if quoted, otherwise up to
// whitespace, a quote, '&', ',' or ';'.
TextSpan value_at(std::string_view line, std::size_t v) {
  if (v < line.size() && is_quote(line[v])) {
    const auto close = line.find(line[v], v + 1);
    return {v + 1, close == npos ? line.size() : close};
  }
  if (line.substr(v, 2) == "\\\"") {
    const auto close = line.find("\\\"", v + 2);
    return {v + 2, close == npos ? line.size() : close};
  }
  auto end = v;
  while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])) &&
         std::string_view("\"'&,;").find(line[end]) == npos)
    ++end;
  return {v, end};
}

void find_key_values(std::string_view line, std::vector<PatternMatch>& out) {
  std::size_t i = 0;
  while (i < line.size()) {
    if (!is_key_char(line[i])) {
      ++i;
      continue;
    }
    const auto key_begin = i;
    while (i < line.size() && is_key_char(line[i])) ++i;
    const auto key = line.substr(key_begin, i - key_begin);
    if (!has_secret_suffix(key)) continue;
    auto op = skip_spaces(line, skip_quote(line, i));
    if (op >= line.size() || (line[op] != '=' && line[op] != ':')) continue;
    // "terraform_data.secret: Creating..." is tofu naming a resource, not a pair; dotted keys
    // ("db.password=x") only count with '='. "==" is a comparison in a quoted expression.
    if (line[op] == ':' && key.find('.') != npos) continue;
    if (line.substr(op, 2) == "==") continue;
    if (line.substr(op, 2) == "=>") ++op;
    const auto value = value_at(line, skip_spaces(line, op + 1));
    if (is_not_secret(line.substr(value.begin, value.end - value.begin))) continue;
    out.push_back({CredentialPattern::secret_key_value, value});
    i = std::max(i, value.end);
  }
}

}  // namespace

std::vector<PatternMatch> find_credential_patterns(std::string_view line) {
  std::vector<PatternMatch> out;
  find_authorization(line, out);
  find_scheme_tokens(line, out);
  find_url_passwords(line, out);
  find_key_values(line, out);
  return out;
}

std::optional<TextSpan> find_private_key_header(std::string_view text, std::string_view keyword,
                                                std::size_t from) {
  constexpr std::string_view kKey = "PRIVATE KEY";
  constexpr std::size_t kMaxKind = 40;  // " RSA ", " ENCRYPTED ", " OPENSSH ", " PGP "
  for (auto pos = text.find(keyword, from); pos != npos; pos = text.find(keyword, pos + 1)) {
    const auto kind_begin = pos + keyword.size();
    const auto key = text.find(kKey, kind_begin);
    if (key == npos || key - kind_begin > kMaxKind || key == kind_begin) continue;
    const auto kind = text.substr(kind_begin, key - kind_begin);
    if (!std::all_of(kind.begin(), kind.end(), [](char c) {
          return c == ' ' || std::isupper(static_cast<unsigned char>(c)) ||
                 std::isdigit(static_cast<unsigned char>(c));
        }))
      continue;
    auto end = key + kKey.size();
    if (text.substr(end, 6) == " BLOCK") end += 6;
    if (text.substr(end, 5) != "-----") continue;
    return TextSpan{pos, end + 5};
  }
  return std::nullopt;
}

}  // namespace takosumi::redaction
