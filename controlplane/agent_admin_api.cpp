// PublicApi: the operator's action on an agent's identity (docs/security.md "Agent identity").
#include "controlplane/public_api.hpp"

namespace takosumi::controlplane {

HttpResponse PublicApi::reset_agent_keys(const std::string& agent_id) {
  auto agent = in_transaction(d_.db, [&]() -> Result<Agent> {
    auto reset = d_.agents.reset_keys(agent_id);
    if (!reset) return reset;
    AuditEvent e{.actor = actor_, .action = "agent.keys_reset"};
    e.detail = {{"agentId", reset->id}, {"name", reset->name},
                {"signPublicKey", reset->sign_public_key}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return reset;
  });
  if (!agent) return error_response(agent.error());
  return json_response(200, boost::json::object{{"agentId", agent->id},
                                                {"name", agent->name},
                                                {"keysReset", true}});
}

}  // namespace takosumi::controlplane
