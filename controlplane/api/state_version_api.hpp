#pragma once
// The public API's StateVersions (docs/state-versions.md): a Capsule's history, paged; one
// StateVersion; a Workspace's current ones; rollback plans; drift checks of a Capsule or a whole
// Workspace; and destroy (a destroy_plan). Every operation here only creates Runs or reads
// history: a StateVersion is appended by the apply of a plan, never here.
#include <boost/asio/awaitable.hpp>

#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class StateVersionApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the StateVersionApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse state_versions(const HttpRequest& req, const std::string& capsule_id);
  HttpResponse get_state_version(const std::string& id);
  HttpResponse current_state_versions(const std::string& workspace_id);
  HttpResponse rollback_plan(const HttpRequest& req, const std::string& state_version_id);
  // conflict while the Capsule has consumers (through a share not revoked, counted, not named).
  // The StateVersion a drift check of the Capsule compares with (no_state_version when none).
  Result<StateVersion> drift_pin(const Capsule& capsule);
  HttpResponse drift_check_capsule(const std::string& actor, const std::string& capsule_id);
  HttpResponse drift_check_workspace(const std::string& actor, const std::string& workspace_id);
  boost::asio::awaitable<HttpResponse> async_destroy(std::string actor, const std::string& capsule_id);
};

}  // namespace takosumi::controlplane
