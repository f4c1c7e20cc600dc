#include "protocol/output_type.hpp"

#include "common/error_codes.hpp"

namespace takosumi::protocol {

namespace json = boost::json;

bool is_output_type(std::string_view type) {
  return type == "string" || type == "number" || type == "bool" || type == "any";
}

std::string output_kind(const json::value& value) {
  switch (value.kind()) {
    case json::kind::string: return "string";
    case json::kind::bool_: return "bool";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "number";
    case json::kind::array: return "list";
    case json::kind::object: return "object";
    case json::kind::null: return "null";
  }
  return "unknown";
}

Result<bool> output_type_matches(const json::value& value, std::string_view type) {
  if (type == "any") return true;
  if (type == "string") return value.is_string();
  if (type == "number") return value.is_number();
  if (type == "bool") return value.is_bool();
  return fail(errc::kInvalidArgument,
              "unknown output type \"" + std::string(type.substr(0, 32)) +
                  "\" (known: string, number, bool, any); fix the Capsule's outputAllowlist");
}

}  // namespace takosumi::protocol
