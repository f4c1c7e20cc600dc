#pragma once
// The public API under /api/v1 (Workspaces, Capsules, Runs, StateVersions, Outputs, Connections,
// activity), guarded by the API bearer token (constant-time comparison), which the router checks on
// the request head before the body is read. Bodies are strict: an unknown field is refused by name.
// JSON is camelCase; errors follow http_types. Resolving a Capsule's ref (libgit2) runs on the blocking-work pool.
// StateVersion history, rollback, drift checks and destroy are in state_version_api.cpp
// (docs/state-versions.md); Connections and a Capsule's secrets in connection_api.cpp; the
// activity feed in activity_api.cpp. Every action is audited in its own transaction; no Run is
// created for a Capsule whose Connections are not all active (409 connection_revoked/expired).
// Every Capsule answer carries what needs a person (capsule_attention.hpp). An operator resets an
// agent's keys in agent_admin_api.cpp.
#include <boost/asio/thread_pool.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/secret_bytes.hpp"
#include "controlplane/store/agent_registry.hpp"
#include "controlplane/store/audit_log.hpp"
#include "controlplane/store/blob_store.hpp"
#include "controlplane/store/catalog_store.hpp"
#include "controlplane/runs/claim_waiters.hpp"
#include "controlplane/store/connection_store.hpp"
#include "controlplane/runs/git_ref_resolver.hpp"
#include "controlplane/store/keyring.hpp"
#include "controlplane/http/router.hpp"
#include "controlplane/store/run_log_store.hpp"
#include "controlplane/store/run_store.hpp"
#include "controlplane/store/state_store.hpp"

namespace takosumi::controlplane {

struct PublicApiDeps {
  Database& db;
  CatalogStore& catalog;
  RunStore& runs;
  StateStore& states;
  RunLogStore& logs;
  ConnectionStore& connections;
  AuditLog& audit;
  const BlobStore& blobs;
  const Keyring& keys;
  const GitRefResolver& git;
  boost::asio::thread_pool::executor_type pool;
  ClaimWaiters& waiters;
  const Clock& clock;
  const SecretBytes& api_token;
  AgentRegistry& agents;
};

class PublicApi {
 public:
  explicit PublicApi(PublicApiDeps deps)
      : d_(deps), actor_(api_actor(deps.api_token.reveal_as_string())) {}
  // Routes capture `this`: the PublicApi must outlive the router.
  void register_routes(Router& router);

 private:
  Status authorize(const HttpRequest& req) const;
  // Capsule JSON with needsAttention and attention, computed now.
  Result<boost::json::object> capsule_json(const Capsule& capsule);
  HttpResponse capsule_response(int status, const Capsule& capsule);
  HttpResponse create_workspace(const HttpRequest& req);
  HttpResponse list_workspaces();
  HttpResponse get_workspace(const std::string& id);
  HttpResponse create_capsule(const HttpRequest& req, const std::string& workspace_id);
  HttpResponse list_capsules(const std::string& workspace_id);
  HttpResponse current_state_versions(const std::string& workspace_id);
  HttpResponse get_capsule(const std::string& id);
  HttpResponse set_capsule_policy(const HttpRequest& req, const std::string& capsule_id);
  HttpResponse list_runs(const HttpRequest& req, const std::string& capsule_id);
  boost::asio::awaitable<HttpResponse> async_plan(const std::string& capsule_id);
  boost::asio::awaitable<Result<std::string>> async_resolve_head(const Capsule& capsule);
  HttpResponse outputs(const std::string& capsule_id);
  HttpResponse get_run(const std::string& id);
  HttpResponse apply(const HttpRequest& req, const std::string& plan_run_id);
  HttpResponse cancel(const std::string& run_id);
  HttpResponse logs(const std::string& run_id);
  // state_version_api.cpp
  HttpResponse state_versions(const HttpRequest& req, const std::string& capsule_id);
  HttpResponse get_state_version(const std::string& id);
  HttpResponse rollback_plan(const std::string& state_version_id);
  Result<StateVersion> drift_pin(const Capsule& capsule);
  HttpResponse drift_check_capsule(const std::string& capsule_id);
  HttpResponse drift_check_workspace(const std::string& workspace_id);
  boost::asio::awaitable<HttpResponse> async_destroy(const std::string& capsule_id);
  // connection_api.cpp
  HttpResponse create_connection(const HttpRequest& req);
  HttpResponse list_connections(const HttpRequest& req);
  HttpResponse get_connection(const std::string& id);
  HttpResponse revoke_connection(const std::string& id);
  HttpResponse set_capsule_connections(const HttpRequest& req, const std::string& capsule_id);
  HttpResponse set_sensitive_variables(const HttpRequest& req, const std::string& capsule_id);
  // What the create request asks of the Capsule's secrets, checked and sealed.
  Result<CapsuleSecretsRecord> capsule_secrets(boost::json::object& body,
                                               std::string_view workspace_id,
                                               const std::map<std::string, std::string>& variables);
  Status check_assignable(std::string_view workspace_id, const std::vector<std::string>& ids);
  // 409 connection_revoked / connection_expired when a Connection of the Capsule is not active.
  Status check_connections(const Capsule& capsule);
  // activity_api.cpp
  HttpResponse activity(const HttpRequest& req, const std::string& workspace_id);
  // agent_admin_api.cpp: revokes the agent's token and lets its next registration in with the
  // signing key the body names, {"signPublicKey": "<base64>"}, and no other (agent.keys_reset).
  HttpResponse reset_agent_keys(const HttpRequest& req, const std::string& agent_id);
  // Runs `create` and records run.created (with acceptDataLoss for applies) in one transaction.
  Result<Run> create_run(const std::function<Result<Run>()>& create,
                         std::optional<bool> accept_data_loss = std::nullopt);

  PublicApiDeps d_;
  std::string actor_;
};

}  // namespace takosumi::controlplane
