#pragma once
// ASCII case, for names that compare without it (host names, provider addresses, header names,
// hex ids): one implementation, independent of the locale.
#include <string>
#include <string_view>

namespace takosumi {

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

// Whether s starts with `prefix` (given in lower case), in any case.
inline bool starts_with_ignoring_case(std::string_view s, std::string_view lower_prefix) {
  if (s.size() < lower_prefix.size()) return false;
  for (std::size_t i = 0; i < lower_prefix.size(); ++i)
    if (ascii_lower(s[i]) != lower_prefix[i]) return false;
  return true;
}

}  // namespace takosumi
