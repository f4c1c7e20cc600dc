#include "redaction/stream_redactor.hpp"

namespace takosumi::redaction {
namespace {

// Held text up to this size is rescanned with every chunk; longer held text (the start of a long
// secret) only after it grew by an eighth, so a trickle of small chunks costs linear time.
constexpr std::size_t kEagerHeld = 4 * 1024;

}  // namespace

StreamRedactor::StreamRedactor(const SecretSet* secrets, Sink next)
    : secrets_(secrets), next_(std::move(next)) {}

void StreamRedactor::feed(std::string_view bytes) {
  if (!secrets_) {
    emit(bytes);
    return;
  }
  held_.append(bytes);
  if (held_.size() < rescan_at_ && held_.size() <= kMaxHeld) return;
  auto part = secrets_->redact_prefix(held_);
  emit(part.redacted);
  held_.erase(0, part.consumed);
  rescan_at_ = held_.size() < kEagerHeld ? 0 : held_.size() + held_.size() / 8;
  if (held_.size() > kMaxHeld) flush();
}

void StreamRedactor::flush() {
  rescan_at_ = 0;
  if (held_.empty()) return;
  emit(secrets_ ? secrets_->redact(held_) : held_);
  held_.clear();
}

void StreamRedactor::emit(std::string_view bytes) const {
  if (next_ && !bytes.empty()) next_(bytes);
}

}  // namespace takosumi::redaction
