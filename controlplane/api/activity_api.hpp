#pragma once
// The public API's activity feed: a Workspace's audit events, newest first, paged by event id.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class ActivityApi {
 public:
  explicit ActivityApi(const PublicApiDeps& deps) : d_(deps) {}
  // Routes capture `this`: the ActivityApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse activity(const HttpRequest& req, const std::string& workspace_id);

  PublicApiDeps d_;
};

}  // namespace takosumi::controlplane
