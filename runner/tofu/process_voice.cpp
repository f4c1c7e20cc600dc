#include "runner/tofu/process_voice.hpp"

#include <algorithm>

#include "common/ascii.hpp"

namespace takosumi::runner {
namespace {

// The length of what a reader's eye (or a terminal, or the CLI, which drops control characters)
// passes over at `s`'s start: blanks, quote marks, brackets ("[takosumi-agent: …]" is the
// agent's too), control characters (C0, DEL, C1) and terminal control sequences and the invisible format characters of Unicode
// (zero-width spaces and joiners, direction marks and overrides, word joiner, BOM). 0 when `s`
// starts with anything else.
std::size_t invisible_prefix(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.empty()) return 0;
  const unsigned char c = byte(0);
  if (c == 0x1b && s.size() >= 2 && s[1] == '[') {  // a terminal's control sequence: ESC [ … final
    std::size_t i = 2;
    while (i < s.size() && (byte(i) < 0x40 || byte(i) > 0x7e)) ++i;
    return std::min(i + 1, s.size());
  }
  if (c == ' ' || c == '\t' || c == '>' || c == '[' || c < 0x20 || c == 0x7f) return 1;
  if (c == 0xc2 && s.size() >= 2 && byte(1) >= 0x80 && byte(1) <= 0x9f) return 2;  // C1
  if (s.size() >= 3 && c == 0xe2 && byte(1) == 0x80 &&
      ((byte(2) >= 0x8b && byte(2) <= 0x8f) || (byte(2) >= 0xaa && byte(2) <= 0xae)))
    return 3;  // U+200B–U+200F, U+202A–U+202E
  if (s.size() >= 3 && c == 0xe2 && byte(1) == 0x81 && byte(2) >= 0xa0 && byte(2) <= 0xa4)
    return 3;  // U+2060–U+2064
  if (s.size() >= 3 && c == 0xef && byte(1) == 0xbb && byte(2) == 0xbf) return 3;  // U+FEFF
  return 0;
}

}  // namespace

std::string in_process_voice(std::string_view line) {
  // What a reader skims past does not make a line the agent's either, so such lines are quoted
  // too ("> > takosumi" stays recognisably quoted).
  std::string_view rest = line;
  while (const std::size_t skip = invisible_prefix(rest)) rest.remove_prefix(skip);
  if (!starts_with_ignoring_case(rest, "takosumi")) return std::string(line);
  return "> " + std::string(line);
}

}  // namespace takosumi::runner
