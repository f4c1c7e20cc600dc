#include "runner/plan/plan_analysis.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "common/json_fields.hpp"
#include "runner/plan/plan_json.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
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
  auto list = get_optional_array(doc, "resource_changes");
  if (!list) return std::unexpected(list.error());
  if (!*list) return {};
  for (const auto& v : **list) {
    if (!v.is_object()) return fail(errc::kOpentofuFailed, "resource_changes holds a non-object");
    const auto& entry = v.get_object();
    auto address = get_string(entry, "address", 4096);
    if (!address) return std::unexpected(address.error());
    auto type = get_optional_string(entry, "type", 1024);
    if (!type) return std::unexpected(type.error());
    auto change_object = get_object(entry, "change");
    if (!change_object) return std::unexpected(change_object.error().with_context(*address));
    auto actions = plan_actions_of(**change_object);
    if (!actions) return std::unexpected(actions.error().with_context(*address));
    if (changes_nothing(*actions)) continue;
    auto reason = get_optional_string(entry, "action_reason", 256);
    if (!reason) return std::unexpected(reason.error().with_context(*address));
    if (*reason) out.action_reasons[*address] = std::move(**reason);
    auto change = classify_change(*address, type->value_or(""), std::move(*actions));
    count(change, out.summary);
    out.resource_changes.push_back(std::move(change));
  }
  return {};
}

Result<bool> outputs_change(const json::object& doc) {
  auto outputs = get_optional_object(doc, "output_changes");
  if (!outputs) return std::unexpected(outputs.error());
  if (!*outputs) return false;
  for (const auto& kv : **outputs) {
    if (!kv.value().is_object()) return fail(errc::kOpentofuFailed, "output_changes entry");
    auto actions = plan_actions_of(kv.value().get_object());
    if (!actions) return std::unexpected(actions.error());
    if (!changes_nothing(*actions)) return true;
  }
  return false;
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
  auto doc = parse_object(show_json, kMaxPlanJson);
  if (!doc) return fail(errc::kOpentofuFailed, "plan JSON: " + doc.error().message);
  return analyze_plan(*doc);
}

Result<PlanAnalysis> analyze_plan(const boost::json::object& doc) {
  PlanAnalysis out;
  auto checked = [&]() -> Status {
    TAKOSUMI_TRY(check_plan_format(doc));
    TAKOSUMI_TRY(read_resource_changes(doc, out));
    auto outputs = outputs_change(doc);
    if (!outputs) return std::unexpected(outputs.error());
    out.has_changes = !out.resource_changes.empty() || *outputs;
    return {};
  }();
  if (!checked) return fail(errc::kOpentofuFailed, "plan JSON: " + checked.error().message);
  return out;
}

}  // namespace takosumi::runner
