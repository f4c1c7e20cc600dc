#pragma once
// Agent pools through the API (docs/operations.md "Agent pools"): the admin makes a pool with its
// labels and the Workspaces that may use it, then pool tokens for it (POST /api/v1/pool-tokens {"pool"}); Capsules name it
// (agentPool, agentLabels). Listing a pool says how many Runs wait for its agents and how many
// agents and slots it has: what an autoscaler reads beside the queue-depth metric.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class AgentPoolApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the AgentPoolApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_pool(const HttpRequest& req);
  HttpResponse list_pools(const HttpRequest& req);
  // PUT /agent-pools/{name}/workspaces {"workspaces": [...]}: which Workspaces may use it. Runs
  // of a Workspace taken off wait (a claim checks), until it is named again or its Capsules move.
  HttpResponse set_workspaces(const HttpRequest& req, const std::string& name);
  HttpResponse get_pool(const std::string& name);
};

}  // namespace takosumi::controlplane
