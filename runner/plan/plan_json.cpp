#include "runner/plan/plan_json.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {

namespace json = boost::json;

Status check_plan_format(const json::object& doc) {
  auto version = get_string(doc, "format_version", 32);
  if (!version) return std::unexpected(version.error());
  if (!version->starts_with("1.") && *version != "1")
    return fail(errc::kOpentofuFailed, "unsupported plan format_version " + *version);
  return {};
}

Result<std::vector<std::string>> plan_actions_of(const json::object& change) {
  const json::value* actions = change.if_contains("actions");
  if (!actions || !actions->is_array()) return fail(errc::kOpentofuFailed, "actions missing");
  std::vector<std::string> out;
  for (const auto& a : actions->get_array()) {
    if (!a.is_string()) return fail(errc::kOpentofuFailed, "actions holds a non-string");
    out.emplace_back(a.get_string());
  }
  return out;
}

bool changes_nothing(const std::vector<std::string>& actions) {
  return std::all_of(actions.begin(), actions.end(),
                     [](const std::string& a) { return a == "no-op" || a == "read"; });
}

}  // namespace takosumi::runner
