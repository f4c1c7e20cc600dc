#include "redaction/credential_check.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <cctype>
#include <iterator>

#include "redaction/credential_patterns.hpp"
#include "redaction/json_number_text.hpp"

namespace takosumi::redaction {
namespace {

constexpr auto npos = std::string_view::npos;

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_base64url(char c) { return is_alnum(c) || c == '-' || c == '_'; }
bool is_upper_or_digit(char c) {
  return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c));
}

// Length of the run of chars satisfying pred starting at from.
template <class Pred>
std::size_t run_length(std::string_view text, std::size_t from, Pred pred) {
  std::size_t end = from;
  while (end < text.size() && pred(text[end])) ++end;
  return end - from;
}

// Each occurrence of prefix that does not continue a longer word.
template <class Check>
bool any_at_word_start(std::string_view text, std::string_view prefix, Check check) {
  for (auto pos = text.find(prefix); pos != npos; pos = text.find(prefix, pos + 1))
    if ((pos == 0 || !is_base64url(text[pos - 1])) && check(pos + prefix.size())) return true;
  return false;
}

// AKIA/ASIA and 16 of [A-Z0-9], as a whole word.
bool has_aws_key_id(std::string_view text) {
  const auto check = [&](std::size_t body) {
    return run_length(text, body, is_upper_or_digit) == 16 &&
           (body + 16 == text.size() || !is_alnum(text[body + 16]));
  };
  return any_at_word_start(text, "AKIA", check) || any_at_word_start(text, "ASIA", check);
}

// header.payload.signature, base64url, the header a JSON object ("eyJ" is base64 of "{\"").
bool has_jwt(std::string_view text) {
  return any_at_word_start(text, "eyJ", [&](std::size_t body) {
    const auto header_end = body + run_length(text, body, is_base64url);
    if (header_end - body < 7 || header_end >= text.size() || text[header_end] != '.') return false;
    const auto payload = run_length(text, header_end + 1, is_base64url);
    const auto dot = header_end + 1 + payload;
    return payload > 0 && dot < text.size() && text[dot] == '.';
  });
}

bool has_github_token(std::string_view text) {
  const auto check = [&](std::size_t body) {
    return run_length(text, body, [](char c) { return is_alnum(c) || c == '_'; }) >= 20;
  };
  constexpr std::string_view kPrefixes[] = {"ghp_", "gho_", "ghs_", "ghu_", "github_pat_"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes), [&](std::string_view prefix) {
    return any_at_word_start(text, prefix, check);
  });
}

bool has_slack_token(std::string_view text) {
  return any_at_word_start(text, "xox", [&](std::size_t body) {
    return body + 1 < text.size() && std::string_view("abprs").find(text[body]) != npos &&
           text[body + 1] == '-' &&
           run_length(text, body + 2, [](char c) { return is_alnum(c) || c == '-'; }) >= 10;
  });
}

std::string_view reason_for(CredentialPattern pattern) {
  switch (pattern) {
    case CredentialPattern::authorization_header: return "Authorization header";
    case CredentialPattern::scheme_token: return "Bearer or Basic token";
    case CredentialPattern::url_password: return "URL with a password in its userinfo";
    case CredentialPattern::secret_key_value: return "password-style key/value pair";
  }
  return "credential";
}

std::optional<std::string> pattern_reason(std::string_view value) {
  for (std::size_t start = 0; start <= value.size();) {
    const auto end = std::min(value.find('\n', start), value.size());
    const auto matches = find_credential_patterns(value.substr(start, end - start));
    if (!matches.empty()) return std::string(reason_for(matches.front().pattern));
    start = end + 1;
  }
  return std::nullopt;
}

// Whole stored strings only: an Output that merely shares 8 bytes with a secret is not refused.
std::optional<std::string> known_reason(std::string_view text, const SecretSet& known) {
  const auto form = known.find_form(text);
  if (!form) return std::nullopt;
  if (*form == SecretForm::base64 || *form == SecretForm::hex || *form == SecretForm::percent)
    return "contains " + std::string(describe(*form)) + " of a secret this Run holds";
  return "contains the value of a secret this Run holds";
}

std::optional<std::string> text_reason(std::string_view text, const SecretSet& known) {
  if (auto reason = known_reason(text, known)) return reason;
  return credential_reason(text);
}

}  // namespace

std::optional<std::string> credential_reason(std::string_view value) {
  if (find_private_key_header(value, "-----BEGIN")) return "private key block";
  if (auto reason = pattern_reason(value)) return reason;
  if (has_aws_key_id(value)) return "AWS access key id";
  if (has_jwt(value)) return "JSON Web Token";
  if (has_github_token(value)) return "GitHub token";
  if (has_slack_token(value)) return "Slack token";
  return std::nullopt;
}

std::optional<std::string> credential_reason(const boost::json::value& value,
                                             const SecretSet& known) {
  if (value.is_string()) return text_reason(value.get_string(), known);
  if (auto number = json_number_text(value)) return known_reason(*number, known);
  if (value.is_array()) {
    for (const auto& item : value.get_array())
      if (auto reason = credential_reason(item, known)) return reason;
  } else if (value.is_object()) {
    for (const auto& kv : value.get_object()) {
      if (auto reason = text_reason(kv.key(), known)) return reason;
      if (auto reason = credential_reason(kv.value(), known)) return reason;
    }
  }
  return std::nullopt;
}

}  // namespace takosumi::redaction
