#include "redaction/line_splitter.hpp"

namespace takosumi::redaction {

void LineSplitter::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    const auto take = nl == std::string_view::npos ? bytes.size() : nl;
    const auto room = max_line_ - pending_.size();
    if (take > room) {
      // Longer than a line may be: emit a full piece and continue the same line.
      pending_.append(bytes.substr(0, room));
      emit_(pending_);
      pending_.clear();
      bytes.remove_prefix(room);
      continue;
    }
    pending_.append(bytes.substr(0, take));
    if (nl == std::string_view::npos) return;
    emit_line(pending_);
    pending_.clear();
    bytes.remove_prefix(take + 1);
  }
}

void LineSplitter::finish() {
  if (!pending_.empty()) emit_line(pending_);
  pending_.clear();
}

void LineSplitter::emit_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  emit_(line);
}

}  // namespace takosumi::redaction
