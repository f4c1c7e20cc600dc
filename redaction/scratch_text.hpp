#pragma once
// A scratch copy of secret text, wiped when it goes. Capacity is reserved up front so that
// appending within it never leaves an unwiped copy behind in a freed buffer; appending more
// than the capacity given is a bug.
#include <sodium.h>

#include <cstddef>
#include <string>

namespace takosumi::redaction {

class ScratchText {
 public:
  explicit ScratchText(std::size_t capacity) { text_.reserve(capacity); }
  ~ScratchText() {
    text_.resize(text_.capacity());
    sodium_memzero(text_.data(), text_.size());
  }
  ScratchText(const ScratchText&) = delete;
  ScratchText& operator=(const ScratchText&) = delete;
  std::string& text() { return text_; }

 private:
  std::string text_;
};

}  // namespace takosumi::redaction
