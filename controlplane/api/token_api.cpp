#include "controlplane/api/token_api.hpp"

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/store/model/capsule_spec.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxRoles = 256;
constexpr std::int64_t kMaxLifetimeSeconds = 10LL * 366 * 24 * 3600;

json::object to_json(const ApiToken& t) {
  json::object roles;
  for (const auto& [workspace_id, role] : t.roles) roles[workspace_id] = to_string(role);
  return json::object{{"id", t.id},
                      {"name", t.name},
                      {"roles", std::move(roles)},
                      {"createdBy", t.created_by},
                      {"createdAt", time_value(t.created_at)},
                      {"expiresAt", time_value(t.expires_at)},
                      {"revokedAt", time_value(t.revoked_at)},
                      {"lastUsedAt", time_value(t.last_used_at)}};
}

// {"name", "roles": {workspaceId: "viewer" | "operator" | "owner"}, "expiresInSeconds"?}
Result<NewApiToken> parse_token_request(const json::object& body, std::int64_t now) {
  TAKOSUMI_TRY(check_known_fields(body, {"name", "roles", "expiresInSeconds"}));
  NewApiToken spec;
  auto name = get_string(body, "name", 256);
  if (!name) return std::unexpected(name.error());
  if (!is_valid_name(*name))
    return fail(errc::kInvalidArgument,
                "name \"" + *name + "\" must match ^[a-z0-9][a-z0-9_-]{0,62}$");
  spec.name = std::move(*name);
  auto roles = get_object(body, "roles");
  if (!roles) return std::unexpected(roles.error());
  if ((*roles)->empty() || (*roles)->size() > kMaxRoles)
    return fail(errc::kInvalidArgument,
                "roles must name 1 to 256 Workspaces, each with \"viewer\", \"operator\" or "
                "\"owner\"");
  for (const auto& kv : **roles) {
    const auto* text = kv.value().if_string();
    auto role = text ? role_from_string(*text) : std::nullopt;
    if (!role)
      return fail(errc::kInvalidArgument, "roles." + std::string(kv.key()) +
                                              " must be \"viewer\", \"operator\" or \"owner\"");
    spec.roles.emplace(std::string(kv.key()), *role);
  }
  auto lifetime = get_optional_int(body, "expiresInSeconds");
  if (!lifetime) return std::unexpected(lifetime.error());
  if (*lifetime) {
    if (**lifetime < 1 || **lifetime > kMaxLifetimeSeconds)
      return fail(errc::kInvalidArgument, "expiresInSeconds must be 1 to " +
                                              std::to_string(kMaxLifetimeSeconds) +
                                              " (ten years); leave it out for no expiry");
    spec.expires_at = now + **lifetime;
  }
  return spec;
}

// What `caller` may do with a token of these roles: the admin anything; anyone else only with
// the owner role in every Workspace the token reaches.
Status require_manager(const Principal& caller, const std::map<std::string, Role>& roles) {
  for (const auto& [workspace_id, role] : roles)
    TAKOSUMI_TRY(require_role(caller, Role::owner, workspace_id, "workspace " + workspace_id));
  return {};
}

AuditEvent token_event(std::string_view actor, std::string_view action, const ApiToken& t,
                       const std::string& workspace_id) {
  AuditEvent e{.actor = std::string(actor), .action = std::string(action),
               .workspace_id = workspace_id};
  e.detail = {{"tokenId", t.id}, {"name", t.name}, {"role", to_string(t.roles.at(workspace_id))}};
  return e;
}

}  // namespace

void TokenApi::register_routes(Router& r, const PublicRouteAccess& a) {
  // The Workspaces are in the body or the token: the handlers check the owner role in each.
  r.add("POST", "/api/v1/tokens", a.json_body({Role::owner, Scope::handler}),
        [this](auto& req, auto&) { return create_token(req); });
  r.add("GET", "/api/v1/tokens", a.none({Role::owner, Scope::handler}),
        [this](auto& req, auto&) { return list_tokens(req); });
  r.add("POST", "/api/v1/tokens/{}/revoke", a.none({Role::owner, Scope::handler}),
        [this](auto& req, auto& p) { return revoke_token(req, p[0]); });
}

HttpResponse TokenApi::create_token(const HttpRequest& req) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto spec = parse_token_request(*body, d_.clock.now_unix());
  if (!spec) return error_response(spec.error());
  const Principal& caller = principal_of(req);
  if (auto allowed = require_manager(caller, spec->roles); !allowed)
    return error_response(allowed.error());
  // A token outlives neither the token that made it nor its reach.
  if (caller.expires_at && (!spec->expires_at || *spec->expires_at > *caller.expires_at))
    spec->expires_at = caller.expires_at;
  auto created = in_transaction(d_.db, [&]() -> Result<CreatedApiToken> {
    for (const auto& [workspace_id, role] : spec->roles)
      if (auto ws = d_.catalog.get_workspace(workspace_id); !ws)
        return ws.error().code == errc::kNotFound
                   ? fail(errc::kInvalidArgument,
                          "roles." + workspace_id + ": there is no such Workspace")
                   : std::unexpected(ws.error());
    auto token = d_.tokens.create(std::move(*spec), actor(req));
    if (!token) return token;
    for (const auto& [workspace_id, role] : token->token.roles)
      TAKOSUMI_TRY(d_.audit.record(token_event(actor(req), "token.created", token->token,
                                               workspace_id)));
    return token;
  });
  if (!created) return error_response(created.error());
  json::object answer = to_json(created->token);
  // The only time the secret leaves the control plane; only its SHA-256 is kept.
  answer["secret"] = created->secret.reveal_as_string();
  return json_response(201, answer);
}

HttpResponse TokenApi::list_tokens(const HttpRequest& req) {
  auto all = d_.tokens.list();
  if (!all) return error_response(all.error());
  const Principal& caller = principal_of(req);
  json::array out;
  for (const auto& t : *all)
    if (require_manager(caller, t.roles)) out.push_back(to_json(t));
  return json_response(200, json::object{{"tokens", std::move(out)}});
}

HttpResponse TokenApi::revoke_token(const HttpRequest& req, const std::string& id) {
  const Principal& caller = principal_of(req);
  auto token = d_.tokens.get(id);
  // An unknown id is refused as another's token is, unless the caller is the admin.
  if (!token && (caller.admin || token.error().code != errc::kNotFound))
    return error_response(token.error());
  if (!token || !require_manager(caller, token->roles))
    return error_response(Error{std::string(errc::kForbidden),
                                "token " + id +
                                    " reaches a Workspace this API token lacks the owner role in"});
  auto revoked = in_transaction(d_.db, [&]() -> Result<ApiToken> {
    if (token->revoked_at) return *token;  // revoking twice changes nothing
    auto done = d_.tokens.revoke(id);
    if (!done) return done;
    for (const auto& [workspace_id, role] : done->roles)
      TAKOSUMI_TRY(d_.audit.record(token_event(actor(req), "token.revoked", *done, workspace_id)));
    return done;
  });
  if (!revoked) return error_response(revoked.error());
  return json_response(200, to_json(*revoked));
}

}  // namespace takosumi::controlplane
