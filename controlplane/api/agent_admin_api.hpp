#pragma once
// The operator's action on an agent's identity (docs/security.md "Agent identity").
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
};

}  // namespace takosumi::controlplane
