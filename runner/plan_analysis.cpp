#include "runner/plan_analysis.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "protocol/json_fields.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxPlanJson = 64 * 1024 * 1024;

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool only_noop_or_read(const std::vector<std::string>& actions) {
  return std::all_of(actions.begin(), actions.end(),
                     [](const std::string& a) { return a == "no-op" || a == "read"; });
}

// The "actions" of a change object (resource_changes[].change, output_changes.NAME).
Result<std::vector<std::string>> actions_of(const json::object& change) {
  const json::value* actions = change.if_contains("actions");
  if (!actions || !actions->is_array()) return fail(errc::kOpentofuFailed, "actions missing");
  std::vector<std::string> out;
  for (const auto& a : actions->get_array()) {
    if (!a.is_string()) return fail(errc::kOpentofuFailed, "actions holds a non-string");
    out.emplace_back(a.get_string());
  }
  return out;
}

void count(const protocol::ResourceChange& c, protocol::ChangeSummary& s) {
  if (c.is_replace) {
    ++s.replace;
  } else if (contains(c.actions, "create")) {
    ++s.add;
  } else if (contains(c.actions, "update")) {
    ++s.change;
  } else if (c.is_delete) {
    ++s.destroy;
  }
}

Status read_resource_changes(const json::object& doc, PlanAnalysis& out) {
  auto list = protocol::get_optional_array(doc, "resource_changes");
  if (!list) return std::unexpected(list.error());
  if (!*list) return {};
  for (const auto& v : **list) {
    if (!v.is_object()) return fail(errc::kOpentofuFailed, "resource_changes holds a non-object");
    const auto& entry = v.get_object();
    auto address = protocol::get_string(entry, "address", 4096);
    if (!address) return std::unexpected(address.error());
    auto type = protocol::get_optional_string(entry, "type", 1024);
    if (!type) return std::unexpected(type.error());
    auto change_object = protocol::get_object(entry, "change");
    if (!change_object) return std::unexpected(change_object.error().with_context(*address));
    auto actions = actions_of(**change_object);
    if (!actions) return std::unexpected(actions.error().with_context(*address));
    if (only_noop_or_read(*actions)) continue;
    auto change = classify_change(*address, type->value_or(""), std::move(*actions));
    count(change, out.summary);
    out.resource_changes.push_back(std::move(change));
  }
  return {};
}

Result<bool> outputs_change(const json::object& doc) {
  auto outputs = protocol::get_optional_object(doc, "output_changes");
  if (!outputs) return std::unexpected(outputs.error());
  if (!*outputs) return false;
  for (const auto& kv : **outputs) {
    if (!kv.value().is_object()) return fail(errc::kOpentofuFailed, "output_changes entry");
    auto actions = actions_of(kv.value().get_object());
    if (!actions) return std::unexpected(actions.error());
    if (!only_noop_or_read(*actions)) return true;
  }
  return false;
}

Status check_format(const json::object& doc) {
  auto version = protocol::get_string(doc, "format_version", 32);
  if (!version) return std::unexpected(version.error());
  if (!version->starts_with("1.") && *version != "1")
    return fail(errc::kOpentofuFailed, "unsupported plan format_version " + *version);
  return {};
}

}  // namespace

protocol::ResourceChange classify_change(std::string address, std::string type,
                                         std::vector<std::string> actions) {
  protocol::ResourceChange c{std::move(address), std::move(type), std::move(actions)};
  c.is_delete = contains(c.actions, "delete");
  c.is_replace = c.is_delete && contains(c.actions, "create");
  return c;
}

Result<PlanAnalysis> analyze_plan(std::string_view show_json) {
  auto doc = protocol::parse_object(show_json, kMaxPlanJson);
  if (!doc) return fail(errc::kOpentofuFailed, "plan JSON: " + doc.error().message);
  PlanAnalysis out;
  auto checked = [&]() -> Status {
    TAKOSUMI_TRY(check_format(*doc));
    TAKOSUMI_TRY(read_resource_changes(*doc, out));
    auto outputs = outputs_change(*doc);
    if (!outputs) return std::unexpected(outputs.error());
    out.has_changes = !out.resource_changes.empty() || *outputs;
    return {};
  }();
  if (!checked) return fail(errc::kOpentofuFailed, "plan JSON: " + checked.error().message);
  return out;
}

}  // namespace takosumi::runner
