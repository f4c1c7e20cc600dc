#pragma once
// The public API under /api/v1 (Workspaces, Capsules, Runs, StateVersions, Outputs), guarded by
// the API bearer token (constant-time comparison). JSON is camelCase; errors follow http_types.
// Resolving a Capsule's ref (libgit2) runs on the blocking-work pool. StateVersion history,
// rollback, drift checks and destroy are in state_version_api.cpp (docs/state-versions.md).
#include <boost/asio/thread_pool.hpp>

#include "common/secret_bytes.hpp"
#include "controlplane/blob_store.hpp"
#include "controlplane/catalog_store.hpp"
#include "controlplane/claim_waiters.hpp"
#include "controlplane/git_ref_resolver.hpp"
#include "controlplane/router.hpp"
#include "controlplane/run_log_store.hpp"
#include "controlplane/run_store.hpp"
#include "controlplane/state_store.hpp"

namespace takosumi::controlplane {

struct PublicApiDeps {
  CatalogStore& catalog;
  RunStore& runs;
  StateStore& states;
  RunLogStore& logs;
  const BlobStore& blobs;
  const GitRefResolver& git;
  boost::asio::thread_pool::executor_type pool;
  ClaimWaiters& waiters;
  const SecretBytes& api_token;
};

class PublicApi {
 public:
  explicit PublicApi(PublicApiDeps deps) : d_(deps) {}
  // Routes capture `this`: the PublicApi must outlive the router.
  void register_routes(Router& router);

 private:
  Status authorize(const HttpRequest& req) const;
  HttpResponse create_workspace(const HttpRequest& req);
  HttpResponse list_workspaces();
  HttpResponse get_workspace(const std::string& id);
  HttpResponse create_capsule(const HttpRequest& req, const std::string& workspace_id);
  HttpResponse list_capsules(const std::string& workspace_id);
  HttpResponse current_state_versions(const std::string& workspace_id);
  HttpResponse get_capsule(const std::string& id);
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

  PublicApiDeps d_;
};

}  // namespace takosumi::controlplane
