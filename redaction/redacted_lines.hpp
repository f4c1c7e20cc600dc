#pragma once
// One output stream of a process, from the chunks the launcher reads to the lines the Run shows:
// redacted on the bytes first (StreamRedactor), then cut into lines of at most max_line bytes
// (LineSplitter), so neither a chunk boundary nor the long-line cut can split a secret into pieces
// the redactor would miss. Not copyable or movable (the stages point at each other); one per
// stream, on one thread.
#include <cstddef>
#include <string_view>

#include "redaction/line_splitter.hpp"
#include "redaction/stream_redactor.hpp"

namespace takosumi::redaction {

class RedactedLines {
 public:
  // secrets may be null (no exact values to redact); it must outlive this.
  RedactedLines(const SecretSet* secrets, std::size_t max_line, LineSplitter::Emit emit)
      : lines_(max_line, std::move(emit)),
        redactor_(secrets, [this](std::string_view bytes) { lines_.feed(bytes); }) {}
  RedactedLines(const RedactedLines&) = delete;
  RedactedLines& operator=(const RedactedLines&) = delete;

  void feed(std::string_view chunk) { redactor_.feed(chunk); }
  // At the end of the stream: passes on what is held, then an unterminated last line.
  void finish() {
    redactor_.flush();
    lines_.finish();
  }

 private:
  LineSplitter lines_;
  StreamRedactor redactor_;
};

}  // namespace takosumi::redaction
