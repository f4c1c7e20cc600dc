#pragma once
// Splits a byte stream into lines on '\n' (a trailing '\r' is dropped). A line longer than
// max_line is emitted in pieces of max_line bytes, so memory stays bounded whatever the child
// writes. Not thread-safe; one per stream.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace takosumi::redaction {

class LineSplitter {
 public:
  using Emit = std::function<void(std::string_view line)>;

  LineSplitter(std::size_t max_line, Emit emit) : max_line_(max_line), emit_(std::move(emit)) {}

  void feed(std::string_view bytes);
  // Emits what is left after the last '\n' (an unterminated last line), if anything.
  void finish();

 private:
  void emit_line(std::string_view line);

  std::size_t max_line_;
  Emit emit_;
  std::string pending_;
};

}  // namespace takosumi::redaction
