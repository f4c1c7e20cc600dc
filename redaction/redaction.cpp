#include "redaction/redaction.hpp"

namespace takosumi::redaction {
namespace {

// Lines reach this stage at most 64 KiB long (plus markers); the cut only bounds memory.
constexpr std::size_t kMaxLogLine = 1024 * 1024;

constexpr std::string_view kCappedNotice =
    "takosumi: this Run holds more secret text than the redactor indexes for split-off pieces; "
    "from here on, newly learnt secrets are redacted only where they appear whole";

}  // namespace

std::string redact_text(const SecretSet& secrets, std::string_view text) {
  return redact_patterns(secrets.redact(text));
}

LogRedactor::LogRedactor(std::shared_ptr<const SecretSet> secrets, LogSink next)
    : secrets_(std::move(secrets)), next_(std::move(next)),
      lines_(kMaxLogLine, [this](std::string_view line) { emit(line); }),
      bytes_(secrets_.get(), [this](std::string_view bytes) { lines_.feed(bytes); }) {}

void LogRedactor::operator()(std::string_view line) {
  if (!told_capped_ && secrets_ && secrets_->windows_capped()) {
    told_capped_ = true;
    if (next_) next_(kCappedNotice);
  }
  bytes_.feed(line);
  bytes_.feed("\n");
}

void LogRedactor::flush() {
  bytes_.flush();
  lines_.finish();
}

void LogRedactor::emit(std::string_view line) {
  // The PatternRedactor sees every line, in order, even with no one listening: a private key
  // block must be tracked across lines either way.
  auto redacted = patterns_.redact_line(line);
  if (next_) next_(redacted);
}

}  // namespace takosumi::redaction
