#pragma once
// Redacts a byte stream (a process's output as it is read, or the Run's log fed line by line)
// before anything cuts it into lines, so that a secret split across chunks, partial-line flushes
// or the long-line cut is replaced whole, and so are its split-off pieces (SecretSet's windows).
// Holds back only the end that a match may still extend or begin in (SecretSet::redact_prefix):
// at most max_length() - 1 bytes beyond the decided text, plus a match reaching into them. Held
// text past kMaxHeld is forced out, redacted with what is known then. Always uses the current
// contents of the set, which may grow while streaming. Not thread-safe; one per stream.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "redaction/secret_set.hpp"

namespace takosumi::redaction {

class StreamRedactor {
 public:
  static constexpr std::size_t kMaxHeld = 64 * 1024;
  // Receives redacted bytes, in order; a marker keeps the line breaks of what it replaced.
  using Sink = std::function<void(std::string_view bytes)>;

  // secrets may be null (nothing to redact: bytes pass straight on); it must outlive this.
  StreamRedactor(const SecretSet* secrets, Sink next);

  void feed(std::string_view bytes);
  // Passes on everything held, as at the end of the stream. The stream may continue afterwards.
  void flush();

 private:
  void emit(std::string_view bytes) const;

  const SecretSet* secrets_;
  Sink next_;
  std::string held_;  // raw text a match may still extend or begin in
  std::size_t rescan_at_ = 0;  // held_ is not rescanned before it reaches this size
};

}  // namespace takosumi::redaction
