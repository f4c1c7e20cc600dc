#include "redaction/json_number_text.hpp"

#include <array>
#include <charconv>

namespace takosumi::redaction {

std::optional<std::string> json_number_text(const boost::json::value& v) {
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  if (!v.is_double()) return std::nullopt;
  std::array<char, 64> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v.get_double());
  return std::string(buf.data(), r.ptr);
}

}  // namespace takosumi::redaction
