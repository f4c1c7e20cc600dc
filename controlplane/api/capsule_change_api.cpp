// PATCH /api/v1/capsules/{id} and GET /api/v1/capsules/{id}/revisions: a Capsule changes as a new
// spec revision; Runs already made keep running theirs (RunStore::insert records it, the manifest
// is built from it).
#include <algorithm>
#include <set>

#include "common/error_codes.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/api/capsule_api.hpp"
#include "controlplane/api/page_cursor.hpp"
#include "controlplane/store/model/capsule_spec.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

// The names of the variables a change adds, removes or gives another value: for the audit record,
// which never holds values.
json::array changed_variable_names(const protocol::Variables& before, const protocol::Variables& after) {
  std::set<std::string> names;
  for (const auto& [name, value] : before)
    if (auto it = after.find(name); it == after.end() || it->second != value) names.insert(name);
  for (const auto& [name, value] : after)
    if (!before.contains(name)) names.insert(name);
  return json::array(names.begin(), names.end());
}

// What differs, by field ("name", "source.ref", "outputAllowlist", "variables", …).
json::array changed_fields(const Capsule& before, const Capsule& after) {
  json::array fields;
  if (before.name != after.name) fields.emplace_back("name");
  if (before.source.git_url != after.source.git_url) fields.emplace_back("source.gitUrl");
  if (before.source.ref != after.source.ref) fields.emplace_back("source.ref");
  if (before.source.module_path != after.source.module_path) fields.emplace_back("source.modulePath");
  if (before.source.connection_id != after.source.connection_id) fields.emplace_back("source.connection");
  if (protocol::to_json(before.output_allowlist) != protocol::to_json(after.output_allowlist))
    fields.emplace_back("outputAllowlist");
  if (protocol::to_json(before.variables) != protocol::to_json(after.variables)) fields.emplace_back("variables");
  return fields;
}

json::object to_json(const CapsuleRevision& r) {
  return {{"revision", r.revision},
          {"name", r.name},
          {"source", json::object{{"gitUrl", protocol::display_source_url(r.source.git_url)},
                                  {"ref", r.source.ref},
                                  {"modulePath", r.source.module_path}}},
          {"outputAllowlist", protocol::to_json(r.output_allowlist)},
          {"variables", protocol::to_json(r.variables)},
          {"createdAt", time_value(r.created_at)}};
}

}  // namespace

// One source per variable, and no Output taken away that a Dependency reads or an OutputShare
// offers: checked against the Capsule as it is inside the change's transaction, so a concurrent
// change cannot slip between.
Status CapsuleApi::check_change(const Capsule& capsule, const CapsuleChange& change) {
  if (change.variables) {
    for (const auto& [name, unused] : *change.variables)
      if (std::ranges::find(capsule.sensitive_variable_names, name) != capsule.sensitive_variable_names.end())
        return fail(errc::kInvalidArgument, "variables." + name + " is a sensitive variable of this "
                                            "Capsule; a variable has one source (PUT …/sensitive-variables "
                                            "changes it)");
    auto dependencies = d_.dependencies.as_consumer(capsule.id);
    if (!dependencies) return std::unexpected(dependencies.error());
    for (const auto& dependency : *dependencies)
      for (const auto& [name, unused] : *change.variables)
        if (dependency.outputs.contains(name))
          return fail(errc::kInvalidArgument, "variables." + name + " is set by dependency " +
                                                  dependency.id + " (from capsule " +
                                                  dependency.producer_capsule_id + "); a variable has one source");
  }
  if (change.output_allowlist) {
    auto consumers = d_.dependencies.as_producer(capsule.id);
    if (!consumers) return std::unexpected(consumers.error());
    for (const auto& dependency : *consumers)
      for (const auto& [variable, mapping] : dependency.outputs)
        if (!change.output_allowlist->contains(mapping.from))
          return fail(errc::kConflict, "outputAllowlist: Output \"" + mapping.from + "\" is read by dependency " +
                                           dependency.id + " (capsule " + dependency.consumer_capsule_id +
                                           ", variable " + variable + "); delete the Dependency first");
    // An OutputShare offers public Outputs by name: one that is pending or active keeps them.
    auto shares = d_.shares.list(capsule.workspace_id);
    if (!shares) return std::unexpected(shares.error());
    for (const auto& share : *shares) {
      if (share.producer_capsule_id != capsule.id || share.status == share_status::kRevoked) continue;
      for (const auto& name : share.outputs)
        if (!change.output_allowlist->contains(name))
          return fail(errc::kConflict, "outputAllowlist: Output \"" + name + "\" is shared by OutputShare " +
                                           share.id + " (" + share.status + ", to Workspace " +
                                           share.to_workspace_id + "); revoke the share first");
    }
  }
  return {};
}

HttpResponse CapsuleApi::change_capsule(const HttpRequest& req, const std::string& capsule_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  auto change = parse_capsule_change(*body, *capsule);
  if (!change) return error_response(change.error());
  // A source the Workspace may use, as at creation.
  if (change->source)
    if (auto ok = check_capsule_source(d_, capsule->workspace_id, *change->source); !ok)
      return error_response(ok.error());
  json::array fields = changed_fields(*capsule, with_change(*capsule, *change));
  if (fields.empty()) return capsule_response(d_, 200, *capsule);  // nothing differs: no revision
  auto updated = in_transaction(d_.db, [&]() -> Result<Capsule> {
    auto stored = d_.catalog.get_capsule(capsule_id);
    if (!stored) return stored;
    TAKOSUMI_TRY(check_change(*stored, *change));
    auto changed = d_.catalog.change_capsule(*capsule, *change);
    if (!changed) return changed;
    json::object detail{{"specRevision", changed->spec_revision},
                        {"previousRevision", capsule->spec_revision},
                        {"fields", std::move(fields)}};
    if (change->variables)
      detail["variableNames"] = changed_variable_names(capsule->variables, changed->variables);
    TAKOSUMI_TRY(d_.audit.record(capsule_event(actor(req), "capsule.updated", *changed, std::move(detail))));
    return changed;
  });
  if (!updated) return error_response(updated.error());
  return capsule_response(d_, 200, *updated);
}

// Oldest first, a page at a time: a Capsule changed every day for years has thousands.
HttpResponse CapsuleApi::list_revisions(const HttpRequest& req, const std::string& capsule_id) {
  auto limit = query_int(req, "limit", 100, 1, 100);
  if (!limit) return error_response(limit.error());
  const std::string list = "the revisions of capsule " + capsule_id;
  auto after = query_cursor(req, list);
  if (!after) return error_response(after.error());
  // One row past the page tells whether another page exists.
  auto revisions = d_.catalog.list_revisions(capsule_id, static_cast<int>(*limit) + 1, after->value_or(0));
  if (!revisions) return error_response(revisions.error());
  json::value next = nullptr;
  if (static_cast<std::int64_t>(revisions->size()) > *limit) {
    revisions->pop_back();
    next = encode_cursor(list, revisions->back().revision);
  }
  json::array out;
  for (const auto& r : *revisions) out.push_back(to_json(r));
  return json_response(200, json::object{{"revisions", std::move(out)}, {"nextCursor", std::move(next)}});
}

}  // namespace takosumi::controlplane
