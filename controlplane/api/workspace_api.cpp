#include "controlplane/api/workspace_api.hpp"

#include "controlplane/api/api_json.hpp"
#include "controlplane/store/model/capsule_spec.hpp"

namespace takosumi::controlplane {

namespace json = boost::json;

void WorkspaceApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("POST", "/api/v1/workspaces", a.json_body({Role::owner, Scope::admin}),
        [this](auto& req, auto&) { return create_workspace(req); });
  // Lists the Workspaces the token holds a role in.
  r.add("GET", "/api/v1/workspaces", a.none({Role::viewer, Scope::handler}),
        [this](auto& req, auto&) { return list_workspaces(req); });
  r.add("GET", "/api/v1/workspaces/{}", a.none({Role::viewer, Scope::workspace}),
        [this](auto&, auto& p) { return get_workspace(p[0]); });
}

HttpResponse WorkspaceApi::create_workspace(const HttpRequest& req) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto name = parse_workspace_request(*body);
  if (!name) return error_response(name.error());
  auto ws = in_transaction(d_.db, [&]() -> Result<Workspace> {
    auto created = d_.catalog.create_workspace(*name);
    if (!created) return created;
    AuditEvent e{.actor = actor(req), .action = "workspace.created", .workspace_id = created->id};
    e.detail = {{"name", created->name}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return created;
  });
  if (!ws) return error_response(ws.error());
  return json_response(201, to_json(*ws));
}

HttpResponse WorkspaceApi::list_workspaces(const HttpRequest& req) {
  auto all = d_.catalog.list_workspaces();
  if (!all) return error_response(all.error());
  const Principal& caller = principal_of(req);
  std::erase_if(*all, [&](const Workspace& w) { return !caller.has(Role::viewer, w.id); });
  return json_response(200, json::object{{"workspaces", to_json_array(*all)}});
}

HttpResponse WorkspaceApi::get_workspace(const std::string& id) {
  auto ws = d_.catalog.get_workspace(id);
  if (!ws) return error_response(ws.error());
  return json_response(200, to_json(*ws));
}

}  // namespace takosumi::controlplane
