#include "controlplane/runs/capsule_attention.hpp"

#include <boost/json/object.hpp>

#include <map>

#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "controlplane/runs/published_outputs.hpp"

namespace takosumi::controlplane {
namespace {

Attention partial_state(const StateVersion& sv, const std::optional<Run>& creator) {
  std::string why = "status unknown";
  if (creator) why = creator->failure_code.value_or(creator->status);
  return {.code = std::string(attention_code::kPartialState),
          .run_id = sv.created_by_run_id,
          .state_version_id = sv.id,
          .generation = sv.generation,
          .message = "the current StateVersion was kept from an apply that did not finish (" + why +
                     "); review it and plan again"};
}

Attention apply_stranded(const Run& run) {
  const std::string agent = run.agent_id.value_or("?");
  return {.code = std::string(attention_code::kApplyStranded),
          .run_id = run.id,
          .agent_id = run.agent_id,
          .message = "the apply of run " + run.id + " was interrupted and agent " + agent +
                     " has not reported back; its state may be on that host: run `takosumi-agent"
                     " recover` there, or cancel the run"};
}

}  // namespace

std::vector<Attention> capsule_attention(const std::optional<StateVersion>& current,
                                         const std::optional<Run>& creator,
                                         const std::vector<Run>& running, std::int64_t now) {
  std::vector<Attention> out;
  if (current && current->partial) out.push_back(partial_state(*current, creator));
  for (const auto& run : running)
    if (run.stranded(now)) out.push_back(apply_stranded(run));
  return out;
}

Result<std::vector<Attention>> upstream_changes(const Stores& stores, const Capsule& capsule) {
  auto dependencies = stores.dependencies.as_consumer(capsule.id);
  if (!dependencies) return std::unexpected(dependencies.error());
  if (dependencies->empty()) return std::vector<Attention>{};
  auto plan = stores.runs.latest_succeeded_plan(capsule.id);
  if (!plan) return std::unexpected(plan.error());
  if (!*plan) return std::vector<Attention>{};
  // What the plan took, by Dependency: written by ManifestBuilder, an unreadable record is none.
  std::map<std::string, std::string> taken;
  if (auto inputs = parse_json_strict((*plan)->dependency_inputs_json.value_or("[]"));
      inputs && inputs->is_array())
    for (const auto& input : inputs->get_array())
      if (const auto* o = input.if_object())
        if (const auto *id = o->if_contains("dependencyId"), *sha = o->if_contains("outputsSha256");
            id && sha && id->is_string() && sha->is_string())
          taken.emplace(std::string(id->get_string()), std::string(sha->get_string()));
  std::vector<Attention> out;
  for (const Dependency& d : *dependencies) {
    auto producer = stores.catalog.get_capsule(d.producer_capsule_id);
    if (!producer) return std::unexpected(producer.error());
    if (d.output_share_id) {
      // A revoked share passes nothing, not even news of a change.
      auto share = stores.shares.get(*d.output_share_id);
      if (!share) return std::unexpected(share.error());
      if (share->status != share_status::kActive) continue;
    }
    auto all = published_outputs(*producer, stores.states);
    if (!all) return std::unexpected(all.error());
    const PublishedOutputs published = seen_through(d, std::move(*all));
    auto it = taken.find(d.id);
    if (it != taken.end() && it->second == published.sha256) continue;
    // Another Workspace's Capsule is named by id only.
    const std::string who = d.output_share_id ? "capsule " + producer->id
                                              : "capsule " + producer->name + " (" + producer->id + ")";
    out.push_back({.code = std::string(attention_code::kUpstreamChanged),
                   .run_id = (*plan)->id,
                   .state_version_id = published.state_version_id,
                   .generation = published.state_version_id
                                     ? std::optional<std::int64_t>(published.generation)
                                     : std::nullopt,
                   .dependency_id = d.id,
                   .producer_capsule_id = d.producer_capsule_id,
                   .outputs_sha256 = published.sha256,
                   .message = who +
                              " publishes other Outputs than the latest plan of this capsule"
                              " (run " + (*plan)->id + ") took; plan it again"});
  }
  return out;
}

Result<std::vector<Attention>> load_capsule_attention(const Stores& stores, const Capsule& capsule,
                                                      std::int64_t now) {
  StateStore& states = stores.states;
  RunStore& runs = stores.runs;
  const std::string& capsule_id = capsule.id;
  auto current = states.current(capsule_id);
  if (!current) return std::unexpected(current.error());
  std::optional<Run> creator;
  if (*current && (*current)->partial) {
    auto run = runs.get_run((*current)->created_by_run_id);
    if (!run) return std::unexpected(run.error());
    creator = std::move(*run);
  }
  auto running = runs.list_running(capsule_id);
  if (!running) return std::unexpected(running.error());
  auto out = capsule_attention(*current, creator, *running, now);
  auto upstream = upstream_changes(stores, capsule);
  if (!upstream) return std::unexpected(upstream.error());
  out.insert(out.end(), upstream->begin(), upstream->end());
  // Results kept since the current StateVersion: a later one means someone reconciled.
  auto kept = runs.kept_results(capsule_id, *current ? (*current)->created_at : 0);
  if (!kept) return std::unexpected(kept.error());
  for (const auto& k : *kept)
    out.push_back(Attention{
        .code = std::string(attention_code::kResultKept),
        .run_id = k.run_id,
        .agent_id = k.agent_id,
        .message = "the result of run " + k.run_id + " from offline agent " + k.agent_id +
                   " came back after the Capsule moved on (" + k.code + "); it is kept as blob " +
                   k.sha256 + ", not recorded: the site's resources may differ from the current "
                   "state, so compare them and plan again"});
  if (capsule.restore_pending) {
    // What the backup named and could not hold: names only, as it recorded them.
    std::string names;
    bool connections = false;
    std::optional<std::string> source_connection;
    if (auto pending = parse_object(*capsule.restore_pending, 1 << 20)) {
      for (const char* key : {"connections", "sensitiveVariableNames"})
        if (const auto* list = pending->if_contains(key); list && list->is_array()) {
          connections = true;
          for (const auto& n : list->get_array())
            if (n.is_string())
              names += (names.empty() ? "" : ", ") + std::string(n.get_string());
        }
      if (const auto* s = pending->if_contains("sourceConnection"); s && s->is_string())
        source_connection = std::string(s->get_string());
    } else {
      connections = true;
    }
    if (connections)
      out.push_back(Attention{
          .code = std::string(attention_code::kConnectionsMissing),
          .message = "restored from a backup, which holds no secret: create this Capsule's "
                     "Connections again and assign them (PUT /api/v1/capsules/" + capsule.id +
                     "/connections, [] when it needs none), and set its sensitive variables again" +
                     (names.empty() ? std::string() : " (it had: " + names + ")")});
    if (source_connection)
      out.push_back(Attention{
          .code = std::string(attention_code::kConnectionsMissing),
          .message = "restored from a backup, which holds no secret: its source was fetched with "
                     "the Connection of kind git \"" + *source_connection + "\"; create it again "
                     "and name it (PUT /api/v1/capsules/" + capsule.id +
                     "/source-connection {\"connection\": \"<id>\"}, null for a public repository)"});
  }
  if (capsule.state_pending)
    out.push_back(Attention{
        .code = std::string(attention_code::kStateMissing),
        .message = "restored from a backup that recorded StateVersions: no Run until its state "
                   "is imported (POST /api/v1/workspaces/" + capsule.workspace_id +
                   "/state-transfers/import) or an owner starts it without state"});
  return out;
}

boost::json::array to_json(const std::vector<Attention>& attention) {
  boost::json::array out;
  for (const auto& a : attention) {
    boost::json::object o{{"code", a.code}};
    o["runId"] = a.run_id.empty() ? boost::json::value(nullptr) : boost::json::value(a.run_id);
    if (a.state_version_id) o["stateVersionId"] = *a.state_version_id;
    if (a.generation) o["generation"] = *a.generation;
    if (a.agent_id) o["agentId"] = *a.agent_id;
    if (a.dependency_id) o["dependencyId"] = *a.dependency_id;
    if (a.producer_capsule_id) o["producerCapsuleId"] = *a.producer_capsule_id;
    if (a.outputs_sha256) o["outputsSha256"] = *a.outputs_sha256;
    o["message"] = a.message;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace takosumi::controlplane
