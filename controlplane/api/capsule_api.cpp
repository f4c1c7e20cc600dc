#include "controlplane/api/capsule_api.hpp"

#include "common/error_codes.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/runs/published_outputs.hpp"
#include "controlplane/store/model/capsule_spec.hpp"

namespace takosumi::controlplane {

namespace json = boost::json;

void CapsuleApi::register_routes(Router& r, const PublicRouteAccess& a) {
  const Need owner_of_workspace{Role::owner, Scope::workspace};
  const Need viewer{Role::viewer, Scope::capsule};
  const Need owner{Role::owner, Scope::capsule};
  r.add("POST", "/api/v1/workspaces/{}/capsules", a.json_body(owner_of_workspace),
        [this](auto& req, auto& p) { return create_capsule(req, p[0]); });
  r.add("GET", "/api/v1/workspaces/{}/capsules", a.none({Role::viewer, Scope::workspace}),
        [this](auto&, auto& p) { return list_capsules(p[0]); });
  r.add("GET", "/api/v1/capsules/{}", a.none(viewer), [this](auto&, auto& p) { return get_capsule(p[0]); });
  r.add("PATCH", "/api/v1/capsules/{}", a.json_body(owner),
        [this](auto& req, auto& p) { return change_capsule(req, p[0]); });
  r.add("GET", "/api/v1/capsules/{}/revisions", a.none(viewer),
        [this](auto& req, auto& p) { return list_revisions(req, p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/policy", a.json_body(owner),
        [this](auto& req, auto& p) { return set_capsule_policy(req, p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/agent-requirements", a.json_body(owner),
        [this](auto& req, auto& p) { return set_agent_requirements(req, p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/opentofu-version", a.json_body(owner),
        [this](auto& req, auto& p) { return set_opentofu_version(req, p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/source-connection", a.json_body(owner),
        [this](auto& req, auto& p) { return set_source_connection(req, p[0]); });
  r.add("GET", "/api/v1/capsules/{}/outputs", a.none(viewer), [this](auto&, auto& p) { return outputs(p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/connections", a.json_body(owner),
        [this](auto& req, auto& p) { return set_capsule_connections(req, p[0]); });
  r.add("PUT", "/api/v1/capsules/{}/sensitive-variables", a.json_body(owner),
        [this](auto& req, auto& p) { return set_sensitive_variables(req, p[0]); });
  r.add_async("POST", "/api/v1/capsules/{}/plan", a.none({Role::operator_, Scope::capsule}),
              [this](const HttpRequest& req, const RouteParams& p) {
                return async_plan(actor(req), p[0]);
              });
}

HttpResponse CapsuleApi::create_capsule(const HttpRequest& req, const std::string& workspace_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto parsed = parse_capsule_request(*body);
  if (!parsed) return error_response(parsed.error());
  if (auto source = check_capsule_source(d_, workspace_id, parsed->source); !source)
    return error_response(source.error());
  auto secrets = capsule_secrets(*body, workspace_id, parsed->variables);
  if (!secrets) return error_response(secrets.error());
  auto capsule = in_transaction(d_.db, [&]() -> Result<Capsule> {
    TAKOSUMI_TRY(check_pool(parsed->agents.pool, workspace_id));
    auto created = d_.catalog.create_capsule(workspace_id, *parsed, *secrets);
    if (!created) return created;
    json::array connections(created->connection_ids.begin(), created->connection_ids.end());
    json::array names(created->sensitive_variable_names.begin(),
                      created->sensitive_variable_names.end());
    json::array labels(created->agent_labels.begin(), created->agent_labels.end());
    TAKOSUMI_TRY(d_.audit.record(capsule_event(actor(req), "capsule.created", *created,
                                               {{"name", created->name},
                                                {"connections", std::move(connections)},
                                                {"sourceConnection",
                                                 optional_value(created->source.connection_id)},
                                                {"sensitiveVariableNames", std::move(names)},
                                                {"policy", protocol::to_json(created->policy)},
                                                {"agentPool", created->agent_pool},
                                                {"agentLabels", std::move(labels)},
                                                {"opentofuVersion",
                                                 optional_value(created->opentofu_version)}})));
    return created;
  });
  if (!capsule) return error_response(capsule.error());
  return capsule_response(d_, 201, *capsule);
}

HttpResponse CapsuleApi::list_capsules(const std::string& workspace_id) {
  auto all = d_.catalog.list_capsules(workspace_id);
  if (!all) return error_response(all.error());
  json::array capsules;
  for (const auto& c : *all) {
    auto o = capsule_json(d_, c);
    if (!o) return error_response(o.error());
    capsules.push_back(std::move(*o));
  }
  return json_response(200, json::object{{"capsules", std::move(capsules)}});
}

HttpResponse CapsuleApi::get_capsule(const std::string& id) {
  auto capsule = d_.catalog.get_capsule(id);
  if (!capsule) return error_response(capsule.error());
  return capsule_response(d_, 200, *capsule);
}

HttpResponse CapsuleApi::set_capsule_policy(const HttpRequest& req, const std::string& capsule_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto policy = parse_policy(*body);
  if (!policy) return error_response(policy.error());
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  // Queued Runs get the new policy too: the manifest is built when a Run is claimed.
  auto updated = in_transaction(d_.db, [&]() -> Result<Capsule> {
    TAKOSUMI_TRY(d_.catalog.set_policy(capsule_id, *policy));
    TAKOSUMI_TRY(d_.audit.record(
        capsule_event(actor(req), "capsule.policy_set", *capsule, protocol::to_json(*policy))));
    return d_.catalog.get_capsule(capsule_id);
  });
  if (!updated) return error_response(updated.error());
  return capsule_response(d_, 200, *updated);
}

HttpResponse CapsuleApi::set_source_connection(const HttpRequest& req, const std::string& capsule_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = check_known_fields(*body, {"connection"}); !known) return error_response(known.error());
  const auto* field = body->if_contains("connection");
  if (field == nullptr || !(field->is_string() || field->is_null()))
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "field \"connection\" is required: the id of a Connection of kind git "
                                "of the Capsule's Workspace, or null for none"});
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  CapsuleSource source = capsule->source;
  source.connection_id = field->is_string() ? std::optional(std::string(field->get_string())) : std::nullopt;
  // The same checks as at creation: of kind git, of this Workspace, and the URL still allowed.
  if (auto ok = check_capsule_source(d_, capsule->workspace_id, source); !ok) return error_response(ok.error());
  auto updated = in_transaction(d_.db, [&]() -> Result<Capsule> {
    TAKOSUMI_TRY(d_.catalog.set_source_connection(capsule_id, source.connection_id));
    TAKOSUMI_TRY(d_.audit.record(capsule_event(actor(req), "capsule.source_connection_set", *capsule,
                                               {{"sourceConnection", optional_value(source.connection_id)}})));
    return d_.catalog.get_capsule(capsule_id);
  });
  if (!updated) return error_response(updated.error());
  return capsule_response(d_, 200, *updated);
}

Status CapsuleApi::check_pool(const std::string& pool, std::string_view workspace_id) {
  auto usable = d_.pools.usable_by(pool, workspace_id);
  if (!usable) return std::unexpected(usable.error());
  if (!*usable)
    return fail(errc::kInvalidArgument,
                "agentPool: no agent pool \"" + pool + "\" this Workspace may use; an admin makes "
                "pools (POST /api/v1/agent-pools) and names the Workspaces that may use each");
  return {};
}

HttpResponse CapsuleApi::set_agent_requirements(const HttpRequest& req,
                                                const std::string& capsule_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = check_known_fields(*body, {"agentPool", "agentLabels"}); !known)
    return error_response(known.error());
  // Both fields are replaced: a body without the pool would move the Capsule to "default".
  if (!body->contains("agentPool"))
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "field \"agentPool\" is required (\"default\" for the default "
                                "pool): both the pool and the labels are replaced"});
  auto requirements = parse_agent_requirements(*body);
  if (!requirements) return error_response(requirements.error());
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  // Queued Runs follow at once: a claim reads the Capsule's requirements, not a copy.
  auto updated = in_transaction(d_.db, [&]() -> Result<Capsule> {
    TAKOSUMI_TRY(check_pool(requirements->pool, capsule->workspace_id));
    TAKOSUMI_TRY(d_.catalog.set_agent_requirements(capsule_id, *requirements));
    TAKOSUMI_TRY(d_.audit.record(capsule_event(
        actor(req), "capsule.agent_requirements_set", *capsule,
        {{"agentPool", requirements->pool},
         {"agentLabels", json::array(requirements->labels.begin(), requirements->labels.end())}})));
    return d_.catalog.get_capsule(capsule_id);
  });
  if (!updated) return error_response(updated.error());
  return capsule_response(d_, 200, *updated);
}

HttpResponse CapsuleApi::set_opentofu_version(const HttpRequest& req,
                                              const std::string& capsule_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = check_known_fields(*body, {"opentofuVersion"}); !known)
    return error_response(known.error());
  // Required, so an empty body is not read as a request to clear the constraint.
  if (!body->contains("opentofuVersion"))
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "field \"opentofuVersion\" is required (null to remove the "
                                "constraint)"});
  auto constraint = parse_opentofu_version(*body);
  if (!constraint) return error_response(constraint.error());
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  // Queued Runs get it too: the manifest is built when a Run is claimed.
  auto updated = in_transaction(d_.db, [&]() -> Result<Capsule> {
    TAKOSUMI_TRY(d_.catalog.set_opentofu_version(capsule_id, *constraint));
    TAKOSUMI_TRY(d_.audit.record(
        capsule_event(actor(req), "capsule.opentofu_version_set", *capsule,
                      {{"opentofuVersion", optional_value(*constraint)}})));
    return d_.catalog.get_capsule(capsule_id);
  });
  if (!updated) return error_response(updated.error());
  return capsule_response(d_, 200, *updated);
}

boost::asio::awaitable<HttpResponse> CapsuleApi::async_plan(std::string actor,
                                                            const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) co_return error_response(capsule.error());
  if (auto usable = check_connections(d_, *capsule); !usable) co_return error_response(usable.error());
  auto commit = co_await async_resolve_head(d_, *capsule);
  if (!commit) co_return error_response(commit.error());
  co_return create_run(d_, actor, [&] { return d_.runs.create_plan(*capsule, *commit); });
}

HttpResponse CapsuleApi::outputs(const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  auto published = published_outputs(*capsule, d_.states);
  if (!published) return error_response(published.error());
  json::value sv_id = nullptr;
  if (published->state_version_id) sv_id = *published->state_version_id;
  return json_response(200, json::object{{"capsuleId", capsule_id},
                                         {"stateVersionId", sv_id},
                                         {"generation", published->generation},
                                         {"outputs", std::move(published->values)}});
}

}  // namespace takosumi::controlplane
