#pragma once
// Redaction of everything that leaves the agent for a Run: exact secret values, their encodings
// and split-off pieces first (SecretSet), then credential shapes (PatternRedactor). Markers never
// change the number of lines.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "redaction/line_splitter.hpp"
#include "redaction/log_sink.hpp"
#include "redaction/pattern_redactor.hpp"
#include "redaction/secret_set.hpp"
#include "redaction/stream_redactor.hpp"

namespace takosumi::redaction {

// For whole texts: failure messages, reports.
std::string redact_text(const SecretSet& secrets, std::string_view text);

// The last stage of a Run's log: every line (tofu's, already redacted per stream, and the runner's
// own notices) goes through a StreamRedactor as "line\n", so a secret spanning lines (a PEM key
// echoed by a script) is still caught, then through the PatternRedactor line by line. Text that
// could still begin a stored value is held until the following lines decide it (see
// StreamRedactor). Lines reach next in order and one for one with the lines given; when the set
// could not index the pieces of all its secrets (SecretSet::windows_capped) one notice line says
// so. Not thread-safe; one per Run, on one thread.
class LogRedactor {
 public:
  // secrets may be null; the log is then only pattern-redacted.
  LogRedactor(std::shared_ptr<const SecretSet> secrets, LogSink next);
  LogRedactor(const LogRedactor&) = delete;
  LogRedactor& operator=(const LogRedactor&) = delete;

  // One line, without its '\n'.
  void operator()(std::string_view line);
  // Emits every line still held. The log may continue afterwards.
  void flush();

 private:
  void emit(std::string_view line);

  std::shared_ptr<const SecretSet> secrets_;
  LogSink next_;
  PatternRedactor patterns_;
  LineSplitter lines_;
  StreamRedactor bytes_;
  bool told_capped_ = false;
};

}  // namespace takosumi::redaction
