#include "controlplane/api/workspace_backup.hpp"

#include <map>
#include <set>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "controlplane/store/model/dependency_spec.hpp"
#include "crypto/keys.hpp"
#include "protocol/signed_document.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

constexpr int kMaxHistory = 100000;

std::unexpected<Error> invalid(std::string message) {
  return fail(errc::kBackupInvalid, "the backup " + std::move(message));
}

Result<const json::array*> array_of(const json::object& payload, std::string_view key) {
  const auto* v = payload.if_contains(key);
  if (!v || !v->is_array()) return invalid("has no \"" + std::string(key) + "\" list");
  return &v->get_array();
}

Result<Capsule> capsule_from_backup(const json::value& v, const Workspace& ws,
                                    const std::map<std::string, std::string>& connection_names) {
  if (!v.is_object()) return invalid("lists a Capsule that is not an object");
  const auto& o = v.get_object();
  auto id = get_string(o, "id", 128);
  auto created_at = get_time(o, "createdAt");
  auto destroyed_at = get_optional_time(o, "destroyedAt");
  if (const Error* e = first_error(id, created_at, destroyed_at)) return invalid("Capsule: " + e->message);
  if (!is_plausible_id(*id)) return invalid("Capsule id \"" + *id + "\" is not an id");
  // The configuration through the same checks as a new Capsule's.
  json::object request;
  for (const char* key :
       {"name", "source", "outputAllowlist", "variables", "policy", "agentPool", "agentLabels",
        "opentofuVersion"})
    if (const auto* field = o.if_contains(key)) request[key] = *field;
  auto parsed = parse_capsule_request(request);
  if (!parsed) return invalid("Capsule " + *id + ": " + parsed.error().message);
  Capsule c{.id = *id, .workspace_id = ws.id, .name = parsed->name, .source = parsed->source,
            .output_allowlist = parsed->output_allowlist, .variables = parsed->variables,
            .created_at = *created_at, .policy = parsed->policy,
            .agent_pool = parsed->agents.pool, .agent_labels = parsed->agents.labels,
            .opentofu_version = parsed->opentofu_version};
  c.destroyed_at = *destroyed_at;
  json::array connections, sensitive;
  if (const auto* ids = o.if_contains("connections"); ids && ids->is_array())
    for (const auto& cid : ids->get_array())
      if (cid.is_string()) {
        auto it = connection_names.find(std::string(cid.get_string()));
        connections.emplace_back(it != connection_names.end() ? it->second
                                                              : std::string(cid.get_string()));
      }
  if (const auto* names = o.if_contains("sensitiveVariableNames"); names && names->is_array())
    for (const auto& n : names->get_array())
      if (n.is_string()) sensitive.push_back(n);
  json::object pending{{"connections", std::move(connections)},
                       {"sensitiveVariableNames", std::move(sensitive)}};
  // The source's Connection of kind git is not in a backup either: it is made again here.
  if (c.source.connection_id) {
    auto it = connection_names.find(*c.source.connection_id);
    pending["sourceConnection"] = it != connection_names.end() ? it->second : *c.source.connection_id;
    c.source.connection_id.reset();
  }
  c.restore_pending = takosumi::serialize(pending);
  return c;
}

}  // namespace

Result<std::string> backup_payload(const Stores& stores, const Workspace& ws, std::int64_t now) {
  auto capsules = stores.catalog.list_capsules(ws.id);
  auto connections = stores.connections.list(ws.id);
  auto dependencies = stores.dependencies.in_workspace(ws.id);
  auto shares = stores.shares.list(ws.id);
  if (const Error* e = first_error(capsules, connections, dependencies, shares))
    return std::unexpected(*e);
  json::array capsule_list, runs, state_versions, connection_list;
  for (const auto& c : *capsules) {
    capsule_list.push_back(to_json(c));
    auto history = stores.runs.list_runs(c.id, kMaxHistory);
    if (!history) return std::unexpected(history.error());
    for (const auto& r : *history) {
      json::object run = to_json(r);
      // A failure message may quote the module's output: the code is kept, the text is not.
      if (auto* failure = run.if_contains("failure"); failure && failure->is_object())
        failure->get_object().erase("message");
      runs.push_back(std::move(run));
    }
    auto versions = stores.states.list(c.id, kMaxHistory, std::nullopt);
    if (!versions) return std::unexpected(versions.error());
    for (const auto& sv : *versions) state_versions.push_back(to_json(sv));
  }
  // Metadata only: names, provider, mode, status. The values are not readable here at all.
  for (const auto& c : *connections) connection_list.push_back(to_json(c, now));
  return takosumi::serialize(json::object{
      {"createdAt", time_value(now)},
      {"source", json::object{{"keyId", stores.keys.key_id()}}},
      {"workspace", to_json(ws)},
      {"capsules", std::move(capsule_list)},
      {"connections", std::move(connection_list)},
      {"dependencies", to_json_array(*dependencies)},
      {"outputShares", to_json_array(*shares)},
      {"runs", std::move(runs)},
      {"stateVersions", std::move(state_versions)}});
}

Result<RestoreOutcome> restore_payload(const Stores& stores, const json::object& payload) {
  const auto* ws_value = payload.if_contains("workspace");
  if (!ws_value || !ws_value->is_object()) return invalid("has no workspace");
  const auto& ws_json = ws_value->get_object();
  auto ws_id = get_string(ws_json, "id", 128);
  auto ws_name = get_string(ws_json, "name", 256);
  auto ws_created = get_time(ws_json, "createdAt");
  if (const Error* e = first_error(ws_id, ws_name, ws_created))
    return invalid("workspace: " + e->message);
  if (!is_plausible_id(*ws_id) || !is_valid_name(*ws_name))
    return invalid("workspace has an id or name this control plane does not accept");
  auto capsules = array_of(payload, "capsules");
  auto connections = array_of(payload, "connections");
  auto dependencies = array_of(payload, "dependencies");
  auto shares = array_of(payload, "outputShares");
  if (const Error* e = first_error(capsules, connections, dependencies, shares))
    return std::unexpected(*e);

  RestoreOutcome out;
  auto ws = stores.catalog.restore_workspace(Workspace{*ws_id, *ws_name, *ws_created});
  if (!ws) return std::unexpected(ws.error());
  out.workspace = *ws;

  std::map<std::string, std::string> connection_names;  // id → name, for the attention message
  for (const auto& c : **connections)
    if (const auto* o = c.if_object())
      if (auto id = get_string(*o, "id", 128), name = get_string(*o, "name", 256); id && name)
        connection_names.emplace(*id, *name);

  // The Capsules that had state: they wait for it (or an owner's waiver) before any Run.
  std::set<std::string> had_state;
  if (auto versions = array_of(payload, "stateVersions"); versions)
    for (const auto& v : **versions)
      if (const auto* o = v.if_object())
        if (auto id = get_string(*o, "capsuleId", 128)) had_state.insert(*id);
  std::map<std::string, Capsule> restored;
  for (const auto& v : **capsules) {
    auto capsule = capsule_from_backup(v, out.workspace, connection_names);
    if (!capsule) return std::unexpected(capsule.error());
    capsule->state_pending = had_state.contains(capsule->id);
    // Its Runs would wait for agents that cannot exist here; routing them to another pool could
    // hand them to hosts the operator never meant for them.
    if (auto pool = stores.pools.get(capsule->agent_pool); !pool) {
      if (pool.error().code != errc::kNotFound) return std::unexpected(pool.error());
      return fail(errc::kInvalidArgument,
                  "Capsule " + capsule->id + " runs in the agent pool \"" + capsule->agent_pool +
                      "\", which this control plane does not have: an admin creates it (POST "
                      "/api/v1/agent-pools) and the restore is run again");
    }
    TAKOSUMI_TRY(stores.catalog.restore_capsule(*capsule));
    out.capsule_ids.push_back(capsule->id);
    restored.emplace(capsule->id, std::move(*capsule));
  }
  for (const auto& v : **shares)
    if (const auto* o = v.if_object())
      if (auto id = get_string(*o, "id", 128)) out.skipped_output_shares.push_back(*id);
  // Dependencies between restored Capsules, through the same checks as new ones.
  for (const auto& v : **dependencies) {
    if (!v.is_object()) return invalid("lists a Dependency that is not an object");
    const auto& o = v.get_object();
    auto id = get_string(o, "id", 128);
    if (!id) return invalid("Dependency: " + id.error().message);
    if (const auto* share = o.if_contains("outputShareId"); share && share->is_string()) {
      out.skipped_dependencies.push_back(*id);
      continue;
    }
    json::object request;
    for (const char* key : {"producerCapsuleId", "outputs"})
      if (const auto* field = o.if_contains(key)) request[key] = *field;
    auto parsed = parse_dependency_request(request);
    auto consumer_id = get_string(o, "consumerCapsuleId", 128);
    if (!parsed || !consumer_id) return invalid("Dependency " + *id + " does not read");
    auto consumer = restored.find(*consumer_id);
    auto producer = restored.find(parsed->producer_capsule_id);
    if (consumer == restored.end() || producer == restored.end())
      return invalid("Dependency " + *id + " joins Capsules the backup does not hold");
    auto existing = stores.dependencies.as_consumer(consumer->first);
    if (!existing) return std::unexpected(existing.error());
    if (auto ok = check_dependency(*parsed, consumer->second, producer->second, nullptr, *existing);
        !ok)
      return invalid("Dependency " + *id + ": " + ok.error().message);
    auto created = stores.dependencies.create(consumer->second, producer->second,
                                              std::move(parsed->outputs));
    if (!created) return std::unexpected(created.error());
    out.dependency_ids.push_back(created->id);
  }
  return out;
}

Result<boost::json::object> restore_workspace(const Stores& stores, const std::string& document,
                                              std::string_view source_key_base64,
                                              std::string_view actor) {
  auto key = crypto::SignPublicKey::from_base64(source_key_base64);
  if (!key)
    return fail(errc::kInvalidArgument,
                "the source key must be the base64 of 32 bytes: the source control plane's "
                "keys/signing.pub");
  auto payload = protocol::open_signed_document(document, kMaxBackupBytes, kBackupFormat,
                                                kBackupVersion, *key);
  if (!payload) return std::unexpected(payload.error());
  auto restored = in_transaction(stores.db, [&]() -> Result<std::pair<RestoreOutcome, Backup>> {
    auto outcome = restore_payload(stores, *payload);
    if (!outcome) return std::unexpected(outcome.error());
    // The document stays here as the restored Workspace's first backup: its Run and
    // StateVersion history remains readable.
    auto sha256 = stores.blobs.put(document);
    if (!sha256) return std::unexpected(sha256.error());
    auto backup = stores.backups.create(Backup{.workspace_id = outcome->workspace.id,
                                               .origin = "restored",
                                               .created_by = std::string(actor),
                                               .sha256 = *sha256,
                                               .size = static_cast<std::int64_t>(document.size())});
    if (!backup) return std::unexpected(backup.error());
    AuditEvent e{.actor = std::string(actor), .action = "workspace.restored",
                 .workspace_id = outcome->workspace.id};
    e.detail = {{"backupId", backup->id},
                {"sha256", backup->sha256},
                {"sourceSignPublicKey", key->to_base64()},
                {"capsuleIds", string_array(outcome->capsule_ids)}};
    TAKOSUMI_TRY(stores.audit.record(std::move(e)));
    return std::pair{std::move(*outcome), std::move(*backup)};
  });
  if (!restored) return std::unexpected(restored.error());
  const auto& [outcome, backup] = *restored;
  return json::object{
      {"workspace", json::object{{"id", outcome.workspace.id},
                                 {"name", outcome.workspace.name},
                                 {"createdAt", time_value(outcome.workspace.created_at)}}},
      {"capsuleIds", string_array(outcome.capsule_ids)},
      {"dependencyIds", string_array(outcome.dependency_ids)},
      {"backupId", backup.id},
      {"notRestored", json::object{{"outputShares", string_array(outcome.skipped_output_shares)},
                                   {"dependenciesThroughShares",
                                    string_array(outcome.skipped_dependencies)}}},
      {"next", "every Capsule needs attention connections_missing: create its Connections again "
               "and assign them"}};
}

}  // namespace takosumi::controlplane
