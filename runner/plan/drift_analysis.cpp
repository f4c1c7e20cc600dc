#include "runner/plan/drift_analysis.hpp"

#include <algorithm>
#include <set>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "common/json_fields.hpp"
#include "runner/plan/plan_json.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

const json::object* object_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

// after_unknown is `true` for the whole object or an object of per-attribute markers.
bool unknown_after(const json::object& change, std::string_view name) {
  const json::value* unknown = change.if_contains("after_unknown");
  if (!unknown) return false;
  if (unknown->is_bool()) return unknown->get_bool();
  if (!unknown->is_object()) return false;
  const json::value* marker = unknown->get_object().if_contains(name);
  return marker && !(marker->is_bool() && !marker->get_bool());
}

// Names only: the values are compared here and dropped.
std::vector<std::string> differing_attributes(const json::object& change,
                                              const std::vector<std::string>& actions) {
  const json::object* before = object_at(change, "before");
  const json::object* after = object_at(change, "after");
  if (std::find(actions.begin(), actions.end(), "delete") != actions.end() && !after)
    return {std::string(kDeletedAttributes)};
  static const json::object kEmpty;
  const json::object& b = before ? *before : kEmpty;
  const json::object& a = after ? *after : kEmpty;
  std::set<std::string> names;
  for (const auto& kv : b) {
    const json::value* other = a.if_contains(kv.key());
    if (!other || *other != kv.value()) names.emplace(kv.key());
  }
  for (const auto& kv : a)
    if (!b.contains(kv.key())) names.emplace(kv.key());
  for (const auto& kv : a)
    if (unknown_after(change, kv.key())) names.emplace(kv.key());
  return {names.begin(), names.end()};
}

Result<std::optional<protocol::DriftedResource>> read_entry(const json::value& v) {
  if (!v.is_object()) return fail(errc::kOpentofuFailed, "resource_drift holds a non-object");
  const auto& entry = v.get_object();
  auto address = get_string(entry, "address", 4096);
  if (!address) return std::unexpected(address.error());
  auto type = get_optional_string(entry, "type", 1024);
  if (!type) return std::unexpected(type.error().with_context(*address));
  auto change = get_object(entry, "change");
  if (!change) return std::unexpected(change.error().with_context(*address));
  auto actions = plan_actions_of(**change);
  if (!actions) return std::unexpected(actions.error().with_context(*address));
  if (changes_nothing(*actions)) return std::optional<protocol::DriftedResource>{};
  return protocol::DriftedResource{*address, type->value_or(""), join(*actions),
                                   differing_attributes(**change, *actions)};
}

Result<protocol::DriftReport> read_drift(const json::object& doc) {
  TAKOSUMI_TRY(check_plan_format(doc));
  auto list = get_optional_array(doc, "resource_drift");
  if (!list) return std::unexpected(list.error());
  protocol::DriftReport report{"no_drift", {}};
  if (!*list) return report;
  for (const auto& v : **list) {
    auto resource = read_entry(v);
    if (!resource) return std::unexpected(resource.error());
    if (*resource) report.resources.push_back(std::move(**resource));
  }
  if (!report.resources.empty()) report.status = "drift";
  return report;
}

}  // namespace

Result<protocol::DriftReport> analyze_drift(std::string_view show_json) {
  auto doc = parse_object(show_json, kMaxPlanJson);
  if (!doc) return fail(errc::kOpentofuFailed, "refresh-only plan JSON: " + doc.error().message);
  return analyze_drift(*doc);
}

Result<protocol::DriftReport> analyze_drift(const boost::json::object& doc) {
  auto report = read_drift(doc);
  if (!report) return fail(errc::kOpentofuFailed, "refresh-only plan JSON: " + report.error().message);
  return report;
}

}  // namespace takosumi::runner
