#include "runner/redaction.hpp"

namespace takosumi::runner {

std::string redact_text(const SecretSet& secrets, std::string_view text) {
  return redact_patterns(secrets.redact(text));
}

StreamRedactor::StreamRedactor(std::shared_ptr<const SecretSet> secrets, LogSink next)
    : secrets_(std::move(secrets)), next_(std::move(next)) {}

void StreamRedactor::operator()(std::string_view line) {
  pending_.append(line);
  pending_ += '\n';
  if (secrets_) {
    auto part = secrets_->redact_prefix(pending_);
    redacted_ += part.redacted;
    pending_.erase(0, part.consumed);
  } else {
    redacted_ += pending_;
    pending_.clear();
  }
  if (redacted_.size() + pending_.size() > kMaxHeld) release_pending();
  emit_complete_lines();
}

void StreamRedactor::flush() {
  release_pending();
  emit_complete_lines();
  // Unreachable while every input line ends in '\n' and markers keep line breaks; kept so that
  // flush() never loses text whatever the redaction did.
  if (!redacted_.empty()) {
    if (next_) next_(patterns_.redact_line(redacted_));
    redacted_.clear();
  }
}

void StreamRedactor::release_pending() {
  redacted_ += secrets_ ? secrets_->redact(pending_) : pending_;
  pending_.clear();
}

void StreamRedactor::emit_complete_lines() {
  std::size_t start = 0;
  for (auto nl = redacted_.find('\n'); nl != std::string::npos; nl = redacted_.find('\n', start)) {
    // The PatternRedactor sees every line, in order, even with no one listening: a private key
    // block must be tracked across lines either way.
    auto line = patterns_.redact_line(std::string_view(redacted_).substr(start, nl - start));
    if (next_) next_(line);
    start = nl + 1;
  }
  redacted_.erase(0, start);
}

}  // namespace takosumi::runner
