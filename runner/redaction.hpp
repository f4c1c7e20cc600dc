#pragma once
// Redaction of everything that leaves the agent for a Run: exact secret values first (SecretSet),
// then credential shapes (PatternRedactor). Markers never change the number of lines.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "runner/log_sink.hpp"
#include "runner/pattern_redactor.hpp"
#include "runner/secret_set.hpp"

namespace takosumi::runner {

// For whole texts: failure messages, reports.
std::string redact_text(const SecretSet& secrets, std::string_view text);

// Redacts a stream of lines before passing them to next, including secrets that span lines (a PEM
// key echoed by a script): text that could still be the start of a stored value is held back until
// the following lines decide it, at most SecretSet::max_length() - 1 bytes plus the line it starts
// in. Held text beyond kMaxHeld is forced out, redacted with what is known then (a secret longer
// than that is still caught line by line through its line variants). Always uses the current
// contents of secrets, which may grow while streaming. Lines reach next in order and one for one
// with the lines given. Not thread-safe; one per stream, called on one thread.
class StreamRedactor {
 public:
  static constexpr std::size_t kMaxHeld = 64 * 1024;

  StreamRedactor(std::shared_ptr<const SecretSet> secrets, LogSink next);

  // One line, without its '\n'.
  void operator()(std::string_view line);
  // Emits every line still held. The stream may continue afterwards.
  void flush();

 private:
  void release_pending();
  void emit_complete_lines();

  std::shared_ptr<const SecretSet> secrets_;
  LogSink next_;
  PatternRedactor patterns_;
  std::string pending_;   // raw text that may begin a secret still arriving
  std::string redacted_;  // redacted text not yet ended by '\n'
};

}  // namespace takosumi::runner
