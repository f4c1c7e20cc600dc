#include "protocol/plan_view.hpp"

#include "common/error_codes.hpp"

namespace takosumi::protocol {
namespace {

constexpr std::size_t kMaxActions = 8;
// Far above any plan's counts, and small enough that the CLI's sums cannot overflow.
constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;

Result<std::vector<std::string>> actions_from_json(const json::object& o) {
  auto list = get_optional_array(o, "actions");
  if (!list) return std::unexpected(list.error());
  std::vector<std::string> out;
  if (!*list) return fail(errc::kInvalidArgument, "field \"actions\" is required");
  if ((*list)->size() > kMaxActions) return fail(errc::kInvalidArgument, "too many actions");
  for (const auto& v : **list) {
    if (!v.is_string() || v.get_string().size() > 32)
      return fail(errc::kInvalidArgument, "actions must hold action names");
    out.emplace_back(v.get_string());
  }
  return out;
}

json::object attribute_to_json(const PlanAttribute& a) {
  json::object o{{"path", a.path}, {"change", to_string(a.change)}};
  if (a.before) o["before"] = *a.before;
  if (a.after) o["after"] = *a.after;
  if (a.sensitive) o["sensitive"] = true;
  if (a.unknown) o["unknown"] = true;
  if (a.forces_replacement) o["forcesReplacement"] = true;
  return o;
}

json::array attributes_to_json(const std::vector<PlanAttribute>& list) {
  json::array a;
  a.reserve(list.size());
  for (const auto& attr : list) a.push_back(attribute_to_json(attr));
  return a;
}

Result<PlanAttribute> attribute_from_json(const json::value& v) {
  auto entry = entry_object(v, "attributes entries",
                            {"path", "change", "before", "after", "sensitive", "unknown",
                             "forcesReplacement"});
  if (!entry) return std::unexpected(entry.error());
  const json::object& o = **entry;
  auto path = get_string(o, "path", kMaxPlanPathBytes);
  auto change = get_string(o, "change", 16);
  auto before = get_optional_string(o, "before", kMaxPlanValueBytes);
  auto after = get_optional_string(o, "after", kMaxPlanValueBytes);
  auto sensitive = get_bool_or(o, "sensitive", false);
  auto unknown = get_bool_or(o, "unknown", false);
  auto forces = get_bool_or(o, "forcesReplacement", false);
  if (const Error* e = first_error(path, change, before, after, sensitive, unknown, forces))
    return std::unexpected(*e);
  PlanAttribute a{std::move(*path), PlanAttribute::Change::update, std::move(*before),
                  std::move(*after), *sensitive, *unknown, *forces};
  if (*change == "add") a.change = PlanAttribute::Change::add;
  else if (*change == "remove") a.change = PlanAttribute::Change::remove;
  else if (*change != "update")
    return fail(errc::kInvalidArgument, "attribute change must be add, remove or update");
  // What each change shows: an added value has no before, a removed one no after.
  const bool shape = a.change == PlanAttribute::Change::add      ? !a.before && a.after
                     : a.change == PlanAttribute::Change::remove ? a.before && !a.after
                                                                 : a.before && a.after;
  if (!shape)
    return fail(errc::kInvalidArgument, "attribute " + a.path + ": an " + std::string(*change) +
                                            " change has " +
                                            (a.change == PlanAttribute::Change::add ? "only after"
                                             : a.change == PlanAttribute::Change::remove
                                                 ? "only before"
                                                 : "both before and after"));
  return a;
}

// attributes and attributesTruncated of a resource or an Output.
Status attributes_from_json(const json::object& o, std::vector<PlanAttribute>& out, bool& truncated) {
  auto list = get_optional_array(o, "attributes");
  if (!list) return std::unexpected(list.error());
  if (*list) {
    out.reserve((*list)->size());
    for (const auto& v : **list) {
      auto a = attribute_from_json(v);
      if (!a) return std::unexpected(a.error());
      out.push_back(std::move(*a));
    }
  }
  auto cut = get_bool_or(o, "attributesTruncated", false);
  if (!cut) return std::unexpected(cut.error());
  truncated = *cut;
  return {};
}

Result<PlanResource> resource_from_json(const json::value& v) {
  auto entry = entry_object(v, "resources entries",
                            {"address", "type", "actions", "actionReason", "attributes",
                             "attributesTruncated"});
  if (!entry) return std::unexpected(entry.error());
  const json::object& o = **entry;
  auto address = get_string(o, "address", kMaxPlanAddressBytes);
  auto type = get_string(o, "type", 256);
  auto reason = get_optional_string(o, "actionReason", 128);
  auto actions = actions_from_json(o);
  if (const Error* e = first_error(address, type, reason, actions)) return std::unexpected(*e);
  PlanResource r{std::move(*address), std::move(*type), std::move(*actions), reason->value_or(""),
                 {}, false};
  TAKOSUMI_TRY(with_context(attributes_from_json(o, r.attributes, r.attributes_truncated), r.address));
  return r;
}

Result<PlanOutput> output_from_json(const json::value& v) {
  auto entry = entry_object(v, "outputs entries",
                            {"name", "actions", "withheld", "attributes", "attributesTruncated"});
  if (!entry) return std::unexpected(entry.error());
  const json::object& o = **entry;
  auto name = get_string(o, "name", kMaxPlanOutputNameBytes);
  auto withheld = get_optional_string(o, "withheld", 1024);
  auto actions = actions_from_json(o);
  if (const Error* e = first_error(name, withheld, actions)) return std::unexpected(*e);
  PlanOutput out{std::move(*name), std::move(*actions), withheld->value_or(""), {}, false};
  TAKOSUMI_TRY(with_context(attributes_from_json(o, out.attributes, out.attributes_truncated),
                            "output " + out.name));
  if (!out.withheld.empty() && !out.attributes.empty())
    return fail(errc::kInvalidArgument, "output " + out.name + " is withheld but shows values");
  return out;
}

template <class Entry, class T>
Status list_from_json(const json::object& o, std::string_view key, Entry entry, std::vector<T>& out) {
  auto list = get_optional_array(o, key);
  if (!list) return std::unexpected(list.error());
  if (!*list) return {};
  out.reserve((*list)->size());
  for (const auto& v : **list) {
    auto read = entry(v);
    if (!read) return std::unexpected(read.error().with_context(key));
    out.push_back(std::move(*read));
  }
  return {};
}

}  // namespace

std::string_view to_string(PlanAttribute::Change c) {
  switch (c) {
    case PlanAttribute::Change::add: return "add";
    case PlanAttribute::Change::remove: return "remove";
    case PlanAttribute::Change::update: return "update";
  }
  return "update";
}

json::object to_json(const PlanResource& r) {
  json::object o{{"address", r.address}, {"type", r.type}, {"actions", json::array(r.actions.begin(), r.actions.end())}};
  if (!r.action_reason.empty()) o["actionReason"] = r.action_reason;
  o["attributes"] = attributes_to_json(r.attributes);
  if (r.attributes_truncated) o["attributesTruncated"] = true;
  return o;
}

json::object to_json(const PlanOutput& out) {
  json::object o{{"name", out.name}, {"actions", json::array(out.actions.begin(), out.actions.end())}};
  if (!out.withheld.empty()) o["withheld"] = out.withheld;
  o["attributes"] = attributes_to_json(out.attributes);
  if (out.attributes_truncated) o["attributesTruncated"] = true;
  return o;
}

json::object to_json(const PlanView& v) {
  json::array resources;
  resources.reserve(v.resources.size());
  for (const auto& r : v.resources) resources.push_back(to_json(r));
  json::array outputs;
  for (const auto& out : v.outputs) outputs.push_back(to_json(out));
  const auto& s = v.summary;
  return json::object{{"runId", v.run_id},
                      {"planDigest", v.plan_digest},
                      {"changeSummary", json::object{{"add", s.add}, {"change", s.change},
                                                     {"destroy", s.destroy}, {"replace", s.replace}}},
                      {"resources", std::move(resources)},
                      {"outputs", std::move(outputs)},
                      {"resourcesOmitted", v.resources_omitted}};
}

Result<PlanView> plan_view_from_json(const json::object& o) {
  TAKOSUMI_TRY(check_known_fields(
      o, {"runId", "planDigest", "changeSummary", "resources", "outputs", "resourcesOmitted"}));
  PlanView v;
  auto run_id = get_string(o, "runId", 128);
  auto digest = get_optional_string(o, "planDigest", 64);
  auto omitted = get_optional_int(o, "resourcesOmitted");
  auto summary = get_object(o, "changeSummary");
  if (const Error* e = first_error(run_id, digest, omitted, summary)) return std::unexpected(*e);
  v.run_id = std::move(*run_id);
  v.plan_digest = digest->value_or("");
  v.resources_omitted = omitted->value_or(0);
  if (v.resources_omitted < 0 || v.resources_omitted > kMaxCount)
    return fail(errc::kInvalidArgument, "resourcesOmitted must be a count (0 or more)");
  TAKOSUMI_TRY(check_known_fields(**summary, {"add", "change", "destroy", "replace"}, "changeSummary"));
  for (auto [key, dst] : {std::pair{"add", &v.summary.add}, std::pair{"change", &v.summary.change},
                          std::pair{"destroy", &v.summary.destroy},
                          std::pair{"replace", &v.summary.replace}}) {
    auto n = get_optional_int(**summary, key);
    if (!n) return std::unexpected(n.error().with_context("changeSummary"));
    *dst = n->value_or(0);
    if (*dst < 0 || *dst > kMaxCount)
      return fail(errc::kInvalidArgument, "changeSummary." + std::string(key) + " must be a count (0 or more)");
  }
  TAKOSUMI_TRY(list_from_json(o, "resources", resource_from_json, v.resources));
  TAKOSUMI_TRY(list_from_json(o, "outputs", output_from_json, v.outputs));
  return v;
}

Result<PlanView> plan_view_from_text(std::string_view text) {
  auto o = parse_object(text, kMaxPlanViewBytes);
  if (!o) return std::unexpected(o.error().with_context("plan view"));
  return with_context(plan_view_from_json(*o), "plan view");
}

}  // namespace takosumi::protocol
