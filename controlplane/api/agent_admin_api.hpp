#pragma once
// The operator's view of and actions on agents (docs/operations.md "Agents"): the list, revoking
// one, resetting one's keys (docs/security.md "Agent identity"). Admin only: agents serve every
// Workspace.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class AgentAdminApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the AgentAdminApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  // Revokes the agent's token and lets its next registration in with the signing key the body
  // names, {"signPublicKey": "<base64>"}, and no other (agent.keys_reset).
  HttpResponse reset_agent_keys(const HttpRequest& req, const std::string& agent_id);
  HttpResponse list_agents(const HttpRequest& req);
  // Refuses the agent's every later call; its leases end now, so its Runs follow the lease rules
  // (queued again, or stranded once their apply started), and waiting agents are woken for them.
  HttpResponse revoke_agent(const HttpRequest& req, const std::string& agent_id);
};

}  // namespace takosumi::controlplane
