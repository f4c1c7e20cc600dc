#pragma once
// Redacts credentials recognisable by their shape, for secrets the agent was never told about:
// Authorization headers, Bearer/Basic tokens, passwords in URLs, password=/token:-style pairs and
// PEM private key blocks. Complements SecretSet, which redacts exact values. Not thread-safe; one
// per stream, because a private key block spans lines.
//
// A private key block keeps its BEGIN and END header lines (they name only the key type); every
// line in between becomes kRedactionMarker (a blank line stays blank), as does text next to a
// header on its own line (a JSON-escaped key becomes its BEGIN line, [REDACTED], its END line). A block with no END line ends after kMaxPrivateKeyLines lines, so a
// stray BEGIN line cannot silence the rest of a Run's log.
#include <cstddef>
#include <string>
#include <string_view>

namespace takosumi::redaction {

class PatternRedactor {
 public:
  static constexpr std::size_t kMaxPrivateKeyLines = 1000;

  // line has no '\n'; the result has the same number of lines (one).
  std::string redact_line(std::string_view line);

 private:
  bool in_private_key_ = false;
  std::size_t private_key_lines_ = 0;
};

// Runs multi-line text through a fresh PatternRedactor; line breaks are kept as they are.
std::string redact_patterns(std::string_view text);

}  // namespace takosumi::redaction
