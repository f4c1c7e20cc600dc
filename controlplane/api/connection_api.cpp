// Connections: write-only credential values. Values go from the request straight into
// SecretBytes and are sealed to the storage key; no answer, error or audit detail carries one.
#include "controlplane/api/connection_api.hpp"

#include "common/error_codes.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/store/model/connection_spec.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

json::array names_of(const SecretMap& values) {
  json::array out;
  for (const auto& [name, value] : values) out.emplace_back(name);
  return out;
}

}  // namespace

void ConnectionApi::register_routes(Router& r, const PublicRouteAccess& a) {
  // The Workspace of a new Connection is in the body: the handler checks the owner role.
  r.add("POST", "/api/v1/connections", a.json_body({Role::owner, Scope::handler}),
        [this](auto& req, auto&) { return create_connection(req); });
  r.add("GET", "/api/v1/connections", a.none({Role::viewer, Scope::workspace_query}),
        [this](auto& req, auto&) { return list_connections(req); });
  r.add("GET", "/api/v1/connections/{}", a.none({Role::viewer, Scope::connection}),
        [this](auto&, auto& p) { return get_connection(p[0]); });
  r.add("POST", "/api/v1/connections/{}/revoke", a.none({Role::owner, Scope::connection}),
        [this](auto& req, auto& p) { return revoke_connection(req, p[0]); });
}

HttpResponse ConnectionApi::create_connection(const HttpRequest& req) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  const std::int64_t now = d_.clock.now_unix();
  auto parsed = take_connection_request(*body, now);
  if (!parsed) return error_response(parsed.error());
  if (auto allowed = require_role(principal_of(req), Role::owner, parsed->workspace_id,
                                  "workspace " + parsed->workspace_id);
      !allowed)
    return error_response(allowed.error());
  if (auto ws = d_.catalog.get_workspace(parsed->workspace_id); !ws) return error_response(ws.error());
  json::array names = names_of(parsed->values);
  auto connection = in_transaction(d_.db, [&]() -> Result<Connection> {
    auto created = d_.connections.create(std::move(*parsed));
    if (!created) return created;
    AuditEvent e{.actor = actor(req), .action = "connection.created",
                 .workspace_id = created->workspace_id, .connection_id = created->id};
    e.detail = {{"name", created->name}, {"provider", created->provider},
                {"authMode", protocol::to_string(created->auth_mode)}, {"names", std::move(names)}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return created;
  });
  if (!connection) return error_response(connection.error());
  return json_response(201, to_json(*connection, now));
}

HttpResponse ConnectionApi::list_connections(const HttpRequest& req) {
  auto ws = workspace_in_query(d_, req);
  if (!ws) return error_response(ws.error());
  auto all = d_.connections.list(ws->id);
  if (!all) return error_response(all.error());
  const std::int64_t now = d_.clock.now_unix();
  json::array out;
  for (const auto& c : *all) out.push_back(to_json(c, now));
  return json_response(200, json::object{{"connections", std::move(out)}});
}

HttpResponse ConnectionApi::get_connection(const std::string& id) {
  auto connection = d_.connections.get(id);
  if (!connection) return error_response(connection.error());
  return json_response(200, to_json(*connection, d_.clock.now_unix()));
}

HttpResponse ConnectionApi::revoke_connection(const HttpRequest& req, const std::string& id) {
  auto connection = in_transaction(d_.db, [&]() -> Result<Connection> {
    auto before = d_.connections.get(id);
    if (!before || before->revoked_at) return before;  // revoking twice changes nothing
    auto revoked = d_.connections.revoke(id);
    if (!revoked) return revoked;
    AuditEvent e{.actor = actor(req), .action = "connection.revoked",
                 .workspace_id = revoked->workspace_id, .connection_id = revoked->id};
    e.detail = {{"name", revoked->name}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return revoked;
  });
  if (!connection) return error_response(connection.error());
  return json_response(200, to_json(*connection, d_.clock.now_unix()));
}

}  // namespace takosumi::controlplane
