#include "runner/plan/output_filter.hpp"

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "protocol/output_type.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxOutputJson = 16 * 1024 * 1024;

// Only an explicit `false` publishes: anything else OpenTofu might say counts as sensitive.
bool marked_sensitive(const json::object& entry) {
  const json::value* sensitive = entry.if_contains("sensitive");
  return sensitive && !(sensitive->is_bool() && !sensitive->get_bool());
}

}  // namespace

std::vector<std::string> sensitive_mapped_outputs(
    const json::object& outputs, const std::map<std::string, protocol::OutputMapping>& allowlist) {
  std::vector<std::string> names;
  for (const auto& [public_name, mapping] : allowlist) {
    const json::value* entry = outputs.if_contains(mapping.from);
    if (entry && entry->is_object() && marked_sensitive(entry->get_object()))
      names.push_back(public_name);
  }
  return names;
}

Result<FilteredOutputs> filter_outputs(
    std::string_view output_json,
    const std::map<std::string, protocol::OutputMapping>& allowlist) {
  auto doc = parse_object(output_json, kMaxOutputJson);
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
    if (marked_sensitive(entry->get_object())) {
      out.warnings.push_back("output \"" + mapping.from + "\" (public \"" + public_name +
                             "\") is sensitive and was not published");
      out.sensitive.push_back(public_name);
      continue;
    }
    auto ok = protocol::output_type_matches(*value, mapping.type);
    // The mapping came with the manifest: an unknown type there makes the manifest invalid.
    if (!ok)
      return fail(errc::kManifestInvalid, "output \"" + public_name + "\": " + ok.error().message);
    if (!*ok)
      return fail(errc::kOutputTypeMismatch, "output \"" + mapping.from + "\" is a " +
                                                 protocol::output_kind(*value) + ", mapped as " +
                                                 mapping.type);
    out.outputs[public_name] = *value;
  }
  return out;
}

}  // namespace takosumi::runner
