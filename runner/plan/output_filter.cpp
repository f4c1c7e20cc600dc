#include "runner/plan/output_filter.hpp"

#include "common/error_codes.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxOutputJson = 16 * 1024 * 1024;

Result<bool> type_matches(const json::value& v, const std::string& type) {
  if (type == "any") return true;
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "bool") return v.is_bool();
  return fail(errc::kManifestInvalid, "unknown output type \"" + type + "\"");
}

std::string kind_of(const json::value& v) {
  switch (v.kind()) {
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

}  // namespace

Result<FilteredOutputs> filter_outputs(
    std::string_view output_json,
    const std::map<std::string, protocol::OutputMapping>& allowlist) {
  auto doc = protocol::parse_object(output_json, kMaxOutputJson);
  if (!doc) return fail(errc::kOpentofuFailed, "output JSON: " + doc.error().message);
  FilteredOutputs out;
  for (const auto& [public_name, mapping] : allowlist) {
    const json::value* entry = doc->if_contains(mapping.from);
    const json::value* value = nullptr;
    if (entry && entry->is_object()) value = entry->get_object().if_contains("value");
    if (!value || value->is_null()) {
      if (mapping.required)
        return fail(errc::kOutputRequiredMissing,
                    "required output \"" + mapping.from + "\" (public \"" + public_name +
                        "\") has no value");
      continue;
    }
    const json::value* sensitive = entry->get_object().if_contains("sensitive");
    if (sensitive && !(sensitive->is_bool() && !sensitive->get_bool())) {  // only false publishes
      out.warnings.push_back("output \"" + mapping.from + "\" (public \"" + public_name +
                             "\") is sensitive and was not published");
      continue;
    }
    auto ok = type_matches(*value, mapping.type);
    if (!ok) return std::unexpected(ok.error());
    if (!*ok)
      return fail(errc::kOutputTypeMismatch, "output \"" + mapping.from + "\" is a " +
                                                 kind_of(*value) + ", mapped as " + mapping.type);
    out.outputs[public_name] = *value;
  }
  return out;
}

}  // namespace takosumi::runner
