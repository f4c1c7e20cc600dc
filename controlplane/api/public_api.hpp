#pragma once
// The public API under /api/v1, one class per resource (Workspaces, Capsules, Runs,
// StateVersions, Connections, Dependencies, activity, agent administration) sharing PublicApiDeps. Every route
// is guarded by the API bearer token (constant-time comparison), which the router checks on the
// request head before the body is read. Bodies are strict: an unknown field is refused by name.
// JSON is camelCase; errors follow http_types. Every action is audited in its own transaction;
// no Run is created for a Capsule whose Connections are not all active (409
// connection_revoked/expired).
#include "controlplane/api/activity_api.hpp"
#include "controlplane/api/agent_admin_api.hpp"
#include "controlplane/api/capsule_api.hpp"
#include "controlplane/api/connection_api.hpp"
#include "controlplane/api/dependency_api.hpp"
#include "controlplane/api/public_resource.hpp"
#include "controlplane/api/run_api.hpp"
#include "controlplane/api/state_version_api.hpp"
#include "controlplane/api/workspace_api.hpp"

namespace takosumi::controlplane {

class PublicApi {
 public:
  explicit PublicApi(PublicApiDeps deps)
      : d_(deps),
        workspaces_(deps),
        capsules_(deps),
        runs_(deps),
        state_versions_(deps),
        connections_(deps),
        dependencies_(deps),
        activity_(deps),
        agents_(deps) {}
  // Routes capture `this` and the resources: the PublicApi must outlive the router.
  void register_routes(Router& router);

 private:
  Status authorize(const HttpRequest& req) const;

  PublicApiDeps d_;
  WorkspaceApi workspaces_;
  CapsuleApi capsules_;
  RunApi runs_;
  StateVersionApi state_versions_;
  ConnectionApi connections_;
  DependencyApi dependencies_;
  ActivityApi activity_;
  AgentAdminApi agents_;
};

}  // namespace takosumi::controlplane
