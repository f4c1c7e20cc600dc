#pragma once
// The public API under /api/v1, one class per resource (Workspaces, Capsules, Runs,
// StateVersions, Connections, Dependencies, OutputShares, API tokens, activity, agent
// administration, agent pools and their tokens) sharing PublicApiDeps. Every route names the role it needs in which Workspace
// (public_access.hpp), checked on the request head before the body is read. Bodies are strict:
// an unknown field is refused by name.
// JSON is camelCase; errors follow http_types. Every action is audited in its own transaction;
// no Run is created for a Capsule whose Connections are not all active (409
// connection_revoked/expired).
#include "controlplane/api/activity_api.hpp"
#include "controlplane/api/agent_admin_api.hpp"
#include "controlplane/api/agent_pool_api.hpp"
#include "controlplane/api/pool_token_api.hpp"
#include "controlplane/api/backup_api.hpp"
#include "controlplane/api/capsule_api.hpp"
#include "controlplane/api/connection_api.hpp"
#include "controlplane/api/dependency_api.hpp"
#include "controlplane/api/public_resource.hpp"
#include "controlplane/api/offline_api.hpp"
#include "controlplane/api/output_share_api.hpp"
#include "controlplane/api/public_access.hpp"
#include "controlplane/api/run_api.hpp"
#include "controlplane/api/state_version_api.hpp"
#include "controlplane/api/token_api.hpp"
#include "controlplane/api/workspace_api.hpp"
#include "controlplane/api/workspace_graph_api.hpp"

namespace takosumi::controlplane {

class PublicApi {
 public:
  explicit PublicApi(PublicApiDeps deps)
      : access_(deps, deps.api_token),
        workspaces_(deps),
        graph_(deps),
        capsules_(deps),
        runs_(deps),
        state_versions_(deps),
        connections_(deps),
        dependencies_(deps),
        shares_(deps),
        backups_(deps),
        tokens_(deps),
        activity_(deps),
        agents_(deps),
        pool_tokens_(deps),
        pools_(deps),
        offline_(deps) {}
  // Routes capture `this` and the resources: the PublicApi must outlive the router.
  void register_routes(Router& router);

 private:
  PublicAccess access_;
  WorkspaceApi workspaces_;
  WorkspaceGraphApi graph_;
  CapsuleApi capsules_;
  RunApi runs_;
  StateVersionApi state_versions_;
  ConnectionApi connections_;
  DependencyApi dependencies_;
  OutputShareApi shares_;
  BackupApi backups_;
  TokenApi tokens_;
  ActivityApi activity_;
  AgentAdminApi agents_;
  PoolTokenApi pool_tokens_;
  AgentPoolApi pools_;
  OfflineApi offline_;
};

}  // namespace takosumi::controlplane
