#include "controlplane/api/agent_pool_api.hpp"

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/store/agent_pool_store.hpp"
#include "controlplane/store/audit_log.hpp"
#include "controlplane/store/model/capsule_spec.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

Result<json::object> pool_json(AgentPoolStore& pools, const AgentPool& p) {
  auto load = pools.load(p.name);
  if (!load) return std::unexpected(load.error());
  return json::object{{"name", p.name},
                      {"labels", json::array(p.labels.begin(), p.labels.end())},
                      {"workspaces", json::array(p.workspaces.begin(), p.workspaces.end())},
                      {"offline", p.offline},
                      {"createdBy", p.created_by},
                      {"createdAt", time_value(p.created_at)},
                      {"queuedRuns", load->queued},
                      {"agents", load->agents},
                      {"connectedAgents", load->connected_agents},
                      {"capacity", load->capacity},
                      {"busySlots", load->busy_slots}};
}

// {"name": "<pool name>", "labels": [...], "workspaces": [...], "offline": false}: a name as
// Workspaces have; offline: its agents take Runs only as offline Run bundles (docs/air-gapped.md); labels
// every agent of the pool carries, none when absent; the Workspaces that may use it, required
// (["*"]: all), so a pool set apart for some hosts is never every tenant's by omission.
Result<AgentPool> parse_request(const std::string& text) {
  auto body = parse_object(text.empty() ? "{}" : text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(*body, {"name", "labels", "workspaces", "offline"}));
  auto offline = get_bool_or(*body, "offline", false);
  if (!offline) return std::unexpected(offline.error());
  auto name = get_string(*body, "name", 63);
  if (!name) return std::unexpected(name.error());
  if (!is_valid_name(*name))
    return fail(errc::kInvalidArgument,
                "field \"name\" must be a pool name matching ^[a-z0-9][a-z0-9_-]{0,62}$, e.g. "
                "\"gpu-eu\"");
  AgentPool pool{.name = std::move(*name)};
  pool.offline = *offline;
  if (const auto* labels = body->if_contains("labels"); labels && !labels->is_null()) {
    auto parsed = agent_labels_from_json(*labels, "labels");
    if (!parsed) return std::unexpected(parsed.error());
    pool.labels = std::move(*parsed);
  }
  const auto* workspaces = body->if_contains("workspaces");
  if (!workspaces)
    return fail(errc::kInvalidArgument,
                "field \"workspaces\" is required: the ids of the Workspaces whose Capsules may "
                "use the pool, or [\"*\"] for every Workspace");
  auto parsed = pool_workspaces_from_json(*workspaces);
  if (!parsed) return std::unexpected(parsed.error());
  pool.workspaces = std::move(*parsed);
  return pool;
}

// {"workspaces": [...]} of PUT /agent-pools/{name}/workspaces.
Result<std::vector<std::string>> parse_workspaces(const std::string& text) {
  auto body = parse_object(text.empty() ? "{}" : text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(*body, {"workspaces"}));
  const auto* workspaces = body->if_contains("workspaces");
  if (!workspaces) return fail(errc::kInvalidArgument, "field \"workspaces\" is required");
  return pool_workspaces_from_json(*workspaces);
}

AuditEvent pool_event(const std::string& actor, std::string_view action, const AgentPool& pool) {
  AuditEvent e{.actor = actor, .action = std::string(action)};
  e.detail = {{"pool", pool.name},
              {"labels", json::array(pool.labels.begin(), pool.labels.end())},
              {"workspaces", json::array(pool.workspaces.begin(), pool.workspaces.end())}};
  return e;
}

}  // namespace

void AgentPoolApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("POST", "/api/v1/agent-pools", a.json_body({Role::owner, Scope::admin}),
        [this](auto& req, auto&) { return create_pool(req); });
  r.add("GET", "/api/v1/agent-pools", a.none({Role::owner, Scope::admin}),
        [this](auto& req, auto&) { return list_pools(req); });
  r.add("GET", "/api/v1/agent-pools/{}", a.none({Role::owner, Scope::admin}),
        [this](auto&, auto& p) { return get_pool(p[0]); });
  r.add("PUT", "/api/v1/agent-pools/{}/workspaces", a.json_body({Role::owner, Scope::admin}),
        [this](auto& req, auto& p) { return set_workspaces(req, p[0]); });
}

HttpResponse AgentPoolApi::create_pool(const HttpRequest& req) {
  auto request = parse_request(req.body);
  if (!request) return error_response(request.error());
  request->created_by = actor(req);
  auto created = in_transaction(d_.db, [&]() -> Result<AgentPool> {
    auto pool = d_.pools.create(std::move(*request));
    if (!pool) return pool;
    TAKOSUMI_TRY(d_.audit.record(pool_event(actor(req), "agent_pool.created", *pool)));
    return pool;
  });
  if (!created) return error_response(created.error());
  auto answer = pool_json(d_.pools, *created);
  if (!answer) return error_response(answer.error());
  return json_response(201, *answer);
}

HttpResponse AgentPoolApi::set_workspaces(const HttpRequest& req, const std::string& name) {
  auto workspaces = parse_workspaces(req.body);
  if (!workspaces) return error_response(workspaces.error());
  auto updated = in_transaction(d_.db, [&]() -> Result<AgentPool> {
    auto pool = d_.pools.set_workspaces(name, std::move(*workspaces));
    if (!pool) return pool;
    TAKOSUMI_TRY(d_.audit.record(pool_event(actor(req), "agent_pool.workspaces_set", *pool)));
    return pool;
  });
  if (!updated) return error_response(updated.error());
  auto answer = pool_json(d_.pools, *updated);
  if (!answer) return error_response(answer.error());
  return json_response(200, *answer);
}

HttpResponse AgentPoolApi::list_pools(const HttpRequest&) {
  auto pools = d_.pools.list();
  if (!pools) return error_response(pools.error());
  json::array out;
  for (const auto& p : *pools) {
    auto o = pool_json(d_.pools, p);
    if (!o) return error_response(o.error());
    out.push_back(std::move(*o));
  }
  return json_response(200, json::object{{"agentPools", std::move(out)}});
}

HttpResponse AgentPoolApi::get_pool(const std::string& name) {
  auto pool = d_.pools.get(name);
  if (!pool) return error_response(pool.error());
  auto answer = pool_json(d_.pools, *pool);
  if (!answer) return error_response(answer.error());
  return json_response(200, *answer);
}

}  // namespace takosumi::controlplane
