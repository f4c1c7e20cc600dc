#include "controlplane/api/pool_token_api.hpp"

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/store/audit_log.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

json::object pool_token_json(const PoolToken& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"pool", t.pool},
          {"createdBy", t.created_by},
          {"createdAt", time_value(t.created_at)},
          {"revokedAt", time_value(t.revoked_at)}};
}

struct PoolTokenRequest {
  std::string name;
  std::string pool;
};

// {"name": "<what the token is for>", "pool": "<agent pool>"}: a name of 1 to 128 characters;
// the pool is "default" when not given.
Result<PoolTokenRequest> parse_request(const std::string& text) {
  auto body = parse_object(text.empty() ? "{}" : text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(*body, {"name", "pool"}));
  auto name = get_string(*body, "name", 128);
  auto pool = get_optional_string(*body, "pool", 63);
  if (const Error* e = first_error(name, pool)) return std::unexpected(*e);
  if (name->empty())
    return fail(errc::kInvalidArgument,
                "field \"name\" is required: what the pool token is for, e.g. \"eu-pool 2026-12\"");
  return PoolTokenRequest{std::move(*name), pool->value_or(std::string(kDefaultPool))};
}

AuditEvent pool_token_event(const std::string& actor, std::string_view action, const PoolToken& t) {
  AuditEvent e{.actor = actor, .action = std::string(action)};
  e.detail = {{"poolTokenId", t.id}, {"name", t.name}, {"pool", t.pool}};
  return e;
}

}  // namespace

void PoolTokenApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("POST", "/api/v1/pool-tokens", a.json_body({Role::owner, Scope::admin}),
        [this](auto& req, auto&) { return create_pool_token(req); });
  r.add("GET", "/api/v1/pool-tokens", a.none({Role::owner, Scope::admin}),
        [this](auto& req, auto&) { return list_pool_tokens(req); });
  r.add("POST", "/api/v1/pool-tokens/{}/revoke", a.none({Role::owner, Scope::admin}),
        [this](auto& req, auto& p) { return revoke_pool_token(req, p[0]); });
}

HttpResponse PoolTokenApi::create_pool_token(const HttpRequest& req) {
  auto request = parse_request(req.body);
  if (!request) return error_response(request.error());
  auto created = in_transaction(d_.db, [&]() -> Result<CreatedPoolToken> {
    // Pools are never deleted, so the pool the token names stays.
    auto pool = d_.pools.get(request->pool);
    if (!pool && pool.error().code == errc::kNotFound)
      return fail(errc::kInvalidArgument, "pool: " + pool.error().message);
    if (!pool) return std::unexpected(pool.error());
    if (pool->offline)
      return fail(errc::kInvalidArgument,
                  "pool \"" + pool->name + "\" is offline: its agents never connect, so no pool "
                  "token admits to it; register them with POST /api/v1/agents/offline");
    auto token = d_.pool_tokens.create(std::move(request->name), request->pool, actor(req));
    if (!token) return token;
    TAKOSUMI_TRY(d_.audit.record(pool_token_event(actor(req), "pool_token.created", token->token)));
    return token;
  });
  if (!created) return error_response(created.error());
  json::object answer = pool_token_json(created->token);
  answer["token"] = std::string(created->secret.reveal_as_string());
  return json_response(201, answer);
}

HttpResponse PoolTokenApi::list_pool_tokens(const HttpRequest&) {
  auto tokens = d_.pool_tokens.list();
  if (!tokens) return error_response(tokens.error());
  json::array out;
  for (const auto& t : *tokens) out.push_back(pool_token_json(t));
  return json_response(200, json::object{{"poolTokens", std::move(out)}});
}

HttpResponse PoolTokenApi::revoke_pool_token(const HttpRequest& req, const std::string& id) {
  auto revoked = in_transaction(d_.db, [&]() -> Result<PoolToken> {
    auto token = d_.pool_tokens.revoke(id);
    if (!token) return token;
    TAKOSUMI_TRY(d_.audit.record(pool_token_event(actor(req), "pool_token.revoked", *token)));
    return token;
  });
  if (!revoked) return error_response(revoked.error());
  return json_response(200, pool_token_json(*revoked));
}

}  // namespace takosumi::controlplane
