#pragma once
// The public API's Capsules: create, list, read, change (spec revisions), policy, agent pool, OpenTofu version, plan,
// Outputs, and the Capsule's secrets (its Connection assignment and sensitive variables,
// capsule_secrets_api.cpp). Every answer carries what needs a person (capsule_attention.hpp). A
// plan resolves the Capsule's ref on the blocking-work pool.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class CapsuleApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the CapsuleApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_capsule(const HttpRequest& req, const std::string& workspace_id);
  HttpResponse list_capsules(const std::string& workspace_id);
  HttpResponse get_capsule(const std::string& id);
  // PATCH /capsules/{id} {"name", "source", "outputAllowlist", "variables"} (any of them): the
  // Capsule's next spec revision (capsule_change_api.cpp).
  HttpResponse change_capsule(const HttpRequest& req, const std::string& capsule_id);
  Status check_change(const Capsule& capsule, const CapsuleChange& change);
  // GET /capsules/{id}/revisions: each spec revision, oldest first.
  HttpResponse list_revisions(const HttpRequest& req, const std::string& capsule_id);
  HttpResponse set_capsule_policy(const HttpRequest& req, const std::string& capsule_id);
  // PUT /capsules/{id}/agent-requirements {"agentPool", "agentLabels"} (docs/operations.md
  // "Agent pools").
  HttpResponse set_agent_requirements(const HttpRequest& req, const std::string& capsule_id);
  // PUT /capsules/{id}/opentofu-version {"opentofuVersion": "<constraint>" | null}.
  HttpResponse set_opentofu_version(const HttpRequest& req, const std::string& capsule_id);
  // PUT /capsules/{id}/source-connection {"connection": "<id>" | null}: the Connection of kind
  // git its source is fetched with, of its own Workspace (a restored Capsule sets it again).
  HttpResponse set_source_connection(const HttpRequest& req, const std::string& capsule_id);
  // invalid_argument, the same whether the pool does not exist or the Workspace may not use it.
  Status check_pool(const std::string& pool, std::string_view workspace_id);
  boost::asio::awaitable<HttpResponse> async_plan(std::string actor, const std::string& capsule_id);
  HttpResponse outputs(const std::string& capsule_id);
  // capsule_secrets_api.cpp
  HttpResponse set_capsule_connections(const HttpRequest& req, const std::string& capsule_id);
  HttpResponse set_sensitive_variables(const HttpRequest& req, const std::string& capsule_id);
  // What the create request asks of the Capsule's secrets, checked and sealed.
  Result<CapsuleSecretsRecord> capsule_secrets(boost::json::object& body,
                                               std::string_view workspace_id,
                                               const protocol::Variables& variables);
  Status check_assignable(std::string_view workspace_id, const std::vector<std::string>& ids);
};

}  // namespace takosumi::controlplane
