#include "controlplane/api/public_api.hpp"

#include "common/error_codes.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/runs/capsule_attention.hpp"
#include "controlplane/store/capsule_spec.hpp"
#include "controlplane/runs/data_loss.hpp"
#include "crypto/random_ids.hpp"
#include "common/offload.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

// The apply request body is optional: {} or {"acceptDataLoss": true|false}.
Result<bool> parse_accept_data_loss(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return false;
  auto o = protocol::parse_object(body, kMaxJsonBody);
  if (!o) return std::unexpected(o.error());
  TAKOSUMI_TRY(protocol::check_known_fields(*o, {"acceptDataLoss"}));
  return protocol::get_bool_or(*o, "acceptDataLoss", false);
}

}  // namespace

Status PublicApi::authorize(const HttpRequest& req) const {
  auto token = req.bearer_token();
  if (!token || !crypto::secrets_equal(*token, d_.api_token.reveal_as_string()))
    return fail(errc::kUnauthorized, "missing or wrong API token (Authorization: Bearer …)");
  return {};
}

Result<json::object> PublicApi::capsule_json(const Capsule& capsule) {
  auto attention = load_capsule_attention(d_.states, d_.runs, capsule.id, d_.clock.now_unix());
  if (!attention) return std::unexpected(attention.error());
  json::object o = to_json(capsule);
  o["needsAttention"] = !attention->empty();
  o["attention"] = to_json(*attention);
  return o;
}

HttpResponse PublicApi::capsule_response(int status, const Capsule& capsule) {
  auto o = capsule_json(capsule);
  if (!o) return error_response(o.error());
  return json_response(status, *o);
}

void PublicApi::register_routes(Router& r) {
  const Authenticator token = [this](const HttpRequest& head) { return authorize(head); };
  const RouteAccess none{token, RouteBody::none};
  const RouteAccess json_body{token, RouteBody::json};
  r.add("POST", "/api/v1/workspaces", json_body, [this](auto& req, auto&) { return create_workspace(req); });
  r.add("GET", "/api/v1/workspaces", none, [this](auto&, auto&) { return list_workspaces(); });
  r.add("GET", "/api/v1/workspaces/{}", none, [this](auto&, auto& p) { return get_workspace(p[0]); });
  r.add("POST", "/api/v1/workspaces/{}/capsules", json_body,
        [this](auto& req, auto& p) { return create_capsule(req, p[0]); });
  r.add("GET", "/api/v1/workspaces/{}/capsules", none, [this](auto&, auto& p) { return list_capsules(p[0]); });
  r.add("GET", "/api/v1/workspaces/{}/current-state-versions", none,
        [this](auto&, auto& p) { return current_state_versions(p[0]); });
  r.add("GET", "/api/v1/capsules/{}", none, [this](auto&, auto& p) { return get_capsule(p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/policy", json_body,
        [this](auto& req, auto& p) { return set_capsule_policy(req, p[0]); });
  r.add("GET", "/api/v1/capsules/{}/runs", none, [this](auto& req, auto& p) { return list_runs(req, p[0]); });
  r.add("GET", "/api/v1/capsules/{}/state-versions", none,
        [this](auto& req, auto& p) { return state_versions(req, p[0]); });
  r.add("GET", "/api/v1/capsules/{}/outputs", none, [this](auto&, auto& p) { return outputs(p[0]); });
  r.add("GET", "/api/v1/runs/{}", none, [this](auto&, auto& p) { return get_run(p[0]); });
  r.add("POST", "/api/v1/runs/{}/apply", json_body, [this](auto& req, auto& p) { return apply(req, p[0]); });
  r.add("POST", "/api/v1/runs/{}/cancel", none, [this](auto&, auto& p) { return cancel(p[0]); });
  r.add("GET", "/api/v1/runs/{}/logs", none, [this](auto&, auto& p) { return logs(p[0]); });
  r.add("GET", "/api/v1/state-versions/{}", none, [this](auto&, auto& p) { return get_state_version(p[0]); });
  r.add("POST", "/api/v1/state-versions/{}/rollback-plan", none,
        [this](auto&, auto& p) { return rollback_plan(p[0]); });
  r.add("POST", "/api/v1/capsules/{}/drift-check", none,
        [this](auto&, auto& p) { return drift_check_capsule(p[0]); });
  r.add("POST", "/api/v1/workspaces/{}/drift-check", none,
        [this](auto&, auto& p) { return drift_check_workspace(p[0]); });
  r.add("GET", "/api/v1/workspaces/{}/activity", none, [this](auto& req, auto& p) { return activity(req, p[0]); });
  r.add("POST", "/api/v1/connections", json_body, [this](auto& req, auto&) { return create_connection(req); });
  r.add("GET", "/api/v1/connections", none, [this](auto& req, auto&) { return list_connections(req); });
  r.add("GET", "/api/v1/connections/{}", none, [this](auto&, auto& p) { return get_connection(p[0]); });
  r.add("POST", "/api/v1/connections/{}/revoke", none,
        [this](auto&, auto& p) { return revoke_connection(p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/connections", json_body,
        [this](auto& req, auto& p) { return set_capsule_connections(req, p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/sensitive-variables", json_body,
        [this](auto& req, auto& p) { return set_sensitive_variables(req, p[0]); });
  r.add("POST", "/api/v1/agents/{}/reset-keys", json_body,
        [this](auto& req, auto& p) { return reset_agent_keys(req, p[0]); });
  r.add_async("POST", "/api/v1/capsules/{}/plan", none,
              [this](const HttpRequest&, const RouteParams& p) { return async_plan(p[0]); });
  r.add_async("DELETE", "/api/v1/capsules/{}", none,
              [this](const HttpRequest&, const RouteParams& p) { return async_destroy(p[0]); });
}

HttpResponse PublicApi::create_workspace(const HttpRequest& req) {
  auto body = protocol::parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto name = parse_workspace_request(*body);
  if (!name) return error_response(name.error());
  auto ws = in_transaction(d_.db, [&]() -> Result<Workspace> {
    auto created = d_.catalog.create_workspace(*name);
    if (!created) return created;
    AuditEvent e{.actor = actor_, .action = "workspace.created", .workspace_id = created->id};
    e.detail = {{"name", created->name}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return created;
  });
  if (!ws) return error_response(ws.error());
  return json_response(201, to_json(*ws));
}

HttpResponse PublicApi::list_workspaces() {
  auto all = d_.catalog.list_workspaces();
  if (!all) return error_response(all.error());
  return json_response(200, json::object{{"workspaces", to_json_array(*all)}});
}

HttpResponse PublicApi::get_workspace(const std::string& id) {
  auto ws = d_.catalog.get_workspace(id);
  if (!ws) return error_response(ws.error());
  return json_response(200, to_json(*ws));
}

HttpResponse PublicApi::create_capsule(const HttpRequest& req, const std::string& workspace_id) {
  auto body = protocol::parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto parsed = parse_capsule_request(*body);
  if (!parsed) return error_response(parsed.error());
  auto secrets = capsule_secrets(*body, workspace_id, parsed->variables);
  if (!secrets) return error_response(secrets.error());
  auto capsule = in_transaction(d_.db, [&]() -> Result<Capsule> {
    auto created = d_.catalog.create_capsule(workspace_id, *parsed, *secrets);
    if (!created) return created;
    json::array connections(created->connection_ids.begin(), created->connection_ids.end());
    json::array names(created->sensitive_variable_names.begin(),
                      created->sensitive_variable_names.end());
    TAKOSUMI_TRY(d_.audit.record(capsule_event(actor_, "capsule.created", *created,
                                               {{"name", created->name},
                                                {"connections", std::move(connections)},
                                                {"sensitiveVariableNames", std::move(names)},
                                                {"policy", protocol::to_json(created->policy)}})));
    return created;
  });
  if (!capsule) return error_response(capsule.error());
  return capsule_response(201, *capsule);
}

HttpResponse PublicApi::list_capsules(const std::string& workspace_id) {
  auto all = d_.catalog.list_capsules(workspace_id);
  if (!all) return error_response(all.error());
  json::array capsules;
  for (const auto& c : *all) {
    auto o = capsule_json(c);
    if (!o) return error_response(o.error());
    capsules.push_back(std::move(*o));
  }
  return json_response(200, json::object{{"capsules", std::move(capsules)}});
}

HttpResponse PublicApi::get_capsule(const std::string& id) {
  auto capsule = d_.catalog.get_capsule(id);
  if (!capsule) return error_response(capsule.error());
  return capsule_response(200, *capsule);
}

HttpResponse PublicApi::set_capsule_policy(const HttpRequest& req, const std::string& capsule_id) {
  auto body = protocol::parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto policy = parse_policy(*body);
  if (!policy) return error_response(policy.error());
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  // Queued Runs get the new policy too: the manifest is built when a Run is claimed.
  auto updated = in_transaction(d_.db, [&]() -> Result<Capsule> {
    TAKOSUMI_TRY(d_.catalog.set_policy(capsule_id, *policy));
    TAKOSUMI_TRY(d_.audit.record(
        capsule_event(actor_, "capsule.policy_set", *capsule, protocol::to_json(*policy))));
    return d_.catalog.get_capsule(capsule_id);
  });
  if (!updated) return error_response(updated.error());
  return capsule_response(200, *updated);
}

HttpResponse PublicApi::list_runs(const HttpRequest& req, const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  auto limit = query_int(req, "limit", 50, 1, 100);
  if (!limit) return error_response(limit.error());
  auto runs = d_.runs.list_runs(capsule_id, static_cast<int>(*limit));
  if (!runs) return error_response(runs.error());
  return json_response(200, json::object{{"runs", to_json_array(*runs)}});
}

boost::asio::awaitable<Result<std::string>> PublicApi::async_resolve_head(const Capsule& capsule) {
  const GitRefResolver& git = d_.git;
  // A named lambda: g++ 12 mishandles non-trivial temporaries inside a co_await expression.
  auto resolve = [&git, url = capsule.source.git_url, ref = capsule.source.ref] {
    return git.resolve(url, ref);
  };
  co_return co_await async_offload(d_.pool, std::move(resolve));
}

boost::asio::awaitable<HttpResponse> PublicApi::async_plan(const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) co_return error_response(capsule.error());
  if (auto usable = check_connections(*capsule); !usable) co_return error_response(usable.error());
  auto commit = co_await async_resolve_head(*capsule);
  if (!commit) co_return error_response(commit.error());
  auto run = create_run([&] { return d_.runs.create_plan(*capsule, *commit); });
  if (!run) co_return error_response(run.error());
  d_.waiters.notify_all();
  co_return json_response(201, to_json(*run));
}

HttpResponse PublicApi::outputs(const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  auto stored = d_.states.outputs(capsule_id);
  if (!stored) return error_response(stored.error());
  auto outputs = filter_outputs(stored->outputs, capsule->output_allowlist);
  if (!outputs) return error_response(outputs.error());
  json::value sv_id = nullptr;
  if (stored->state_version_id) sv_id = *stored->state_version_id;
  return json_response(200, json::object{{"capsuleId", capsule_id},
                                         {"stateVersionId", sv_id},
                                         {"generation", stored->generation},
                                         {"outputs", std::move(*outputs)}});
}

HttpResponse PublicApi::get_run(const std::string& id) {
  auto run = d_.runs.get_run(id);
  if (!run) return error_response(run.error());
  return json_response(200, to_json(*run));
}

HttpResponse PublicApi::apply(const HttpRequest& req, const std::string& plan_run_id) {
  auto accept = parse_accept_data_loss(req.body);
  if (!accept) return error_response(accept.error());
  auto plan = d_.runs.get_run(plan_run_id);
  if (!plan) return error_response(plan.error());
  auto capsule = d_.catalog.get_capsule(plan->capsule_id);
  if (!capsule) return error_response(capsule.error());
  if (auto usable = check_connections(*capsule); !usable) return error_response(usable.error());
  auto current = d_.states.current(plan->capsule_id);
  if (!current) return error_response(current.error());
  bool stored = false;
  if (plan->plan_artifact_sha256) {
    auto indexed = d_.runs.has_artifact(plan->id, "plan", *plan->plan_artifact_sha256);
    if (!indexed) return error_response(indexed.error());
    stored = *indexed && d_.blobs.contains(*plan->plan_artifact_sha256);
  }
  auto exists = d_.runs.apply_exists_for(plan->id);
  if (!exists) return error_response(exists.error());
  const std::int64_t generation = *current ? (*current)->generation : 0;
  if (auto ok = check_can_apply(*plan, generation, stored, *exists); !ok)
    return error_response(ok.error());
  if (auto ok = check_data_loss_accepted(*plan, *accept); !ok) return error_response(ok.error());
  auto marks = stored_data_loss(*plan);
  if (!marks) return error_response(marks.error());
  auto run = create_run([&] { return d_.runs.create_apply(*plan, *accept && !marks->empty()); },
                        *accept);
  if (!run) return error_response(run.error());
  d_.waiters.notify_all();
  return json_response(201, to_json(*run));
}

HttpResponse PublicApi::cancel(const std::string& run_id) {
  auto run = in_transaction(d_.db, [&]() -> Result<Run> {
    auto cancelled = d_.runs.cancel(run_id);
    if (!cancelled) return cancelled;
    TAKOSUMI_TRY(d_.audit.record(run_event(actor_, "run.cancel_requested", *cancelled)));
    // A queued Run ends at once; a running one ends when its agent reports.
    if (cancelled->finished())
      TAKOSUMI_TRY(d_.audit.record(run_event(actor_, "run.finished", *cancelled,
                                             {{"status", cancelled->status},
                                              {"failureCode", std::string(errc::kCancelled)}})));
    return cancelled;
  });
  if (!run) return error_response(run.error());
  return json_response(200, to_json(*run));
}

Result<Run> PublicApi::create_run(const std::function<Result<Run>()>& create,
                                  std::optional<bool> accept_data_loss) {
  return in_transaction(d_.db, [&]() -> Result<Run> {
    auto run = create();
    if (!run) return run;
    json::object detail{{"type", protocol::to_string(run->type)}};
    if (accept_data_loss) detail["acceptDataLoss"] = *accept_data_loss;
    if (run->restores_state_version_id) detail["restoresStateVersionId"] = *run->restores_state_version_id;
    TAKOSUMI_TRY(d_.audit.record(run_event(actor_, "run.created", *run, std::move(detail))));
    return run;
  });
}

HttpResponse PublicApi::logs(const std::string& run_id) {
  auto run = d_.runs.get_run(run_id);
  if (!run) return error_response(run.error());
  auto chunks = d_.logs.list(run_id);
  if (!chunks) return error_response(chunks.error());
  return json_response(200, logs_to_json(run_id, *chunks));
}

}  // namespace takosumi::controlplane
