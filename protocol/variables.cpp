#include "protocol/variables.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi::protocol {
namespace {

bool is_alpha_(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool is_tofu_identifier(std::string_view s) {
  if (s.empty() || s.size() > 128 || !is_alpha_(s.front())) return false;
  return std::ranges::all_of(s, [](char c) { return is_alpha_(c) || is_digit(c) || c == '-'; });
}

Result<Variables> variables_from_json(const boost::json::object& o) {
  if (o.size() > kMaxVariables)
    return fail(errc::kInvalidArgument,
                "variables has more than " + std::to_string(kMaxVariables) + " entries");
  Variables out;
  for (const auto& kv : o) {
    const std::string name(kv.key());
    if (!is_tofu_identifier(name))
      return fail(errc::kInvalidArgument,
                  "variables: \"" + name + "\" is not an OpenTofu variable name");
    if (takosumi::serialize(kv.value()).size() > kMaxVariableBytes)
      return fail(errc::kInvalidArgument, "variables." + name + " is longer than 64 KiB");
    out.emplace(name, kv.value());
  }
  return out;
}

boost::json::object to_json(const Variables& variables) {
  boost::json::object o;
  for (const auto& [name, value] : variables) o[name] = value;
  return o;
}

}  // namespace takosumi::protocol
