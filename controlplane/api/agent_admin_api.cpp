#include "controlplane/api/agent_admin_api.hpp"

#include "common/error_codes.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/store/audit_log.hpp"
#include "crypto/keys.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"

namespace takosumi::controlplane {
namespace {

// {"signPublicKey": "<base64 of 32 bytes>"}: the key the agent will come back with, as its log
// or `takosumi-agent --print-public-key` shows it. Returned in canonical base64.
Result<std::string> parse_reset_request(const std::string& text) {
  auto body = parse_object(text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(*body, {"signPublicKey"}));
  if (!body->contains("signPublicKey"))
    return fail(errc::kInvalidArgument,
                "field \"signPublicKey\" is required: the new public signing key of the agent "
                "(its log shows it when it is refused; `takosumi-agent --config <file> "
                "--print-public-key` prints it)");
  auto text_key = get_string(*body, "signPublicKey", 64);
  if (!text_key) return std::unexpected(text_key.error());
  auto key = crypto::SignPublicKey::from_base64(*text_key);
  if (!key)
    return fail(errc::kInvalidArgument, "field \"signPublicKey\" must be the base64 of 32 bytes");
  return key->to_base64();
}

boost::json::object agent_json(const AgentRecord& a, std::int64_t now) {
  boost::json::array labels;
  for (const auto& l : a.labels) labels.emplace_back(l);
  const char* state = a.revoked_at                       ? "revoked"
                      : a.keys_reset                      ? "keys_reset"
                      : a.deregistered_at                 ? "deregistered"
                      : now - a.last_seen_at <= kAgentConnectedSeconds ? "online"
                                                           : "offline";
  return {{"id", a.id},
          {"name", a.name},
          {"version", a.version},
          {"labels", std::move(labels)},
          {"slots", boost::json::object{{"busy", a.busy_slots}, {"total", a.capacity}}},
          {"lastHeartbeatAt", time_value(a.last_seen_at)},
          {"certificateIdentity", a.certificate_identity.empty()
                                      ? boost::json::value(nullptr)
                                      : boost::json::value(a.certificate_identity)},
          {"poolTokenId", a.pool_token_id},
          {"pool", a.pool},
          {"state", state},
          {"createdAt", time_value(a.created_at)},
          {"revokedAt", time_value(a.revoked_at)},
          {"credentialExpiresAt", time_value(a.token_expires_at)}};
}

}  // namespace

void AgentAdminApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("GET", "/api/v1/agents", a.none({Role::owner, Scope::admin}),
        [this](auto& req, auto&) { return list_agents(req); });
  r.add("POST", "/api/v1/agents/{}/revoke", a.none({Role::owner, Scope::admin}),
        [this](auto& req, auto& p) { return revoke_agent(req, p[0]); });
  r.add("POST", "/api/v1/agents/{}/reset-keys", a.json_body({Role::owner, Scope::admin}),
        [this](auto& req, auto& p) { return reset_agent_keys(req, p[0]); });
}

HttpResponse AgentAdminApi::list_agents(const HttpRequest&) {
  auto agents = d_.agents.list();
  if (!agents) return error_response(agents.error());
  boost::json::array out;
  const std::int64_t now = d_.clock.now_unix();
  for (const auto& a : *agents) out.push_back(agent_json(a, now));
  return json_response(200, boost::json::object{{"agents", std::move(out)}});
}

HttpResponse AgentAdminApi::revoke_agent(const HttpRequest& req, const std::string& agent_id) {
  const std::int64_t now = d_.clock.now_unix();
  std::int64_t ended = 0;
  auto agent = in_transaction(d_.db, [&]() -> Result<AgentRecord> {
    auto revoked = d_.agents.revoke(agent_id);
    if (!revoked) return revoked;
    auto leases = d_.runs.end_leases_of(agent_id, now);
    if (!leases) return std::unexpected(leases.error());
    ended = *leases;
    AuditEvent e{.actor = actor(req), .action = "agent.revoked"};
    e.detail = {{"agentId", revoked->id}, {"name", revoked->name}, {"leasesEnded", ended}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return revoked;
  });
  if (!agent) return error_response(agent.error());
  if (ended > 0) d_.waiters.notify();
  return json_response(200, agent_json(*agent, now));
}

HttpResponse AgentAdminApi::reset_agent_keys(const HttpRequest& req, const std::string& agent_id) {
  auto new_key = parse_reset_request(req.body);
  if (!new_key) return error_response(new_key.error());
  auto agent = in_transaction(d_.db, [&]() -> Result<Agent> {
    auto reset = d_.agents.reset_keys(agent_id, *new_key);
    if (!reset) return reset;
    AuditEvent e{.actor = actor(req), .action = "agent.keys_reset"};
    e.detail = {{"agentId", reset->id}, {"name", reset->name},
                {"signPublicKey", reset->sign_public_key}, {"newSignPublicKey", *new_key}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return reset;
  });
  if (!agent) return error_response(agent.error());
  return json_response(200, boost::json::object{{"agentId", agent->id},
                                                {"name", agent->name},
                                                {"keysReset", true},
                                                {"signPublicKey", *new_key}});
}

}  // namespace takosumi::controlplane
