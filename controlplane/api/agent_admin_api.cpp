#include "controlplane/api/agent_admin_api.hpp"

#include "common/error_codes.hpp"
#include "controlplane/api/api_json.hpp"
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

}  // namespace

void AgentAdminApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("POST", "/api/v1/agents/{}/reset-keys", a.json_body({Role::owner, Scope::admin}),
        [this](auto& req, auto& p) { return reset_agent_keys(req, p[0]); });
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
