#pragma once
// Hand-written matchers for credential-shaped text, shared by PatternRedactor (which redacts what
// they find) and credential_reason (which refuses an Output because of it). Internal to the runner.
// No std::regex: its recursive matcher can exhaust the stack on one long line of tofu output.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace takosumi::redaction {

struct TextSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

enum class CredentialPattern {
  authorization_header,  // "Authorization: <anything>": the span is everything after the colon
  scheme_token,          // "Bearer <token>" / "Basic <token>": the span is the token
  url_password,          // "scheme://user:pass@host": the span is "user:pass"
  secret_key_value,      // "password = x", "api_key: x", "?token=x": the span is the value
};

struct PatternMatch {
  CredentialPattern pattern;
  TextSpan span;  // the secret part of the match
};

// Every match in one line of text (no '\n' expected), ordered by pattern, spans possibly
// overlapping. Values OpenTofu prints instead of a secret ("(sensitive value)", "<sensitive>",
// "(known after apply)"), kRedactionMarker, references such as var.x and empty values never match.
std::vector<PatternMatch> find_credential_patterns(std::string_view line);

// The first PEM private key header in text at or after from: keyword is "-----BEGIN" or
// "-----END", followed by a label such as "RSA", the words PRIVATE KEY (PGP adds BLOCK) and "-----".
std::optional<TextSpan> find_private_key_header(std::string_view text, std::string_view keyword,
                                                std::size_t from = 0);

}  // namespace takosumi::redaction
