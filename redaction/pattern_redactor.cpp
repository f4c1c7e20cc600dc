#include "redaction/pattern_redactor.hpp"

#include <algorithm>
#include <vector>

#include "redaction/credential_patterns.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::redaction {
namespace {

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t'; });
}

// Overlapping or touching matches become one marker, so "Authorization: Bearer x" reads
// "Authorization: [REDACTED]" rather than a run of markers.
std::string redact_inline(std::string_view text) {
  std::vector<TextSpan> spans;
  for (const auto& m : find_credential_patterns(text))
    if (m.span.end > m.span.begin) spans.push_back(m.span);
  if (spans.empty()) return std::string(text);
  std::sort(spans.begin(), spans.end(),
            [](const TextSpan& a, const TextSpan& b) { return a.begin < b.begin; });
  std::string out;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < spans.size();) {
    TextSpan merged = spans[i++];
    while (i < spans.size() && spans[i].begin <= merged.end)
      merged.end = std::max(merged.end, spans[i++].end);
    out.append(text.substr(copied, merged.begin - copied));
    out += kRedactionMarker;
    copied = merged.end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace

std::string PatternRedactor::redact_line(std::string_view line) {
  std::string out;
  auto rest = line;
  while (true) {
    if (in_private_key_) {
      const auto end = find_private_key_header(rest, "-----END");
      if (!end) {
        if (is_blank(rest)) out += rest;
        else out += kRedactionMarker;
        if (++private_key_lines_ >= kMaxPrivateKeyLines) in_private_key_ = false;
        return out;
      }
      const auto body = rest.substr(0, end->begin);
      if (is_blank(body)) out += body;
      else out += kRedactionMarker;
      out += rest.substr(end->begin, end->end - end->begin);
      rest = rest.substr(end->end);
      in_private_key_ = false;
      continue;
    }
    const auto begin = find_private_key_header(rest, "-----BEGIN");
    if (!begin) return out + redact_inline(rest);
    out += redact_inline(rest.substr(0, begin->begin));
    out += rest.substr(begin->begin, begin->end - begin->begin);
    rest = rest.substr(begin->end);
    in_private_key_ = true;
    private_key_lines_ = 0;
  }
}

std::string redact_patterns(std::string_view text) {
  PatternRedactor redactor;
  std::string out;
  out.reserve(text.size());
  for (std::size_t start = 0;;) {
    const auto nl = text.find('\n', start);
    out += redactor.redact_line(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) return out;
    out += '\n';
    start = nl + 1;
  }
}

}  // namespace takosumi::redaction
