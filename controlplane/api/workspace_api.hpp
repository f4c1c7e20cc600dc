#pragma once
// The public API's Workspaces: create, list, read. Every creation is audited in its own
// transaction.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class WorkspaceApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the WorkspaceApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_workspace(const HttpRequest& req);
  HttpResponse list_workspaces(const HttpRequest& req);
  HttpResponse get_workspace(const std::string& id);
};

}  // namespace takosumi::controlplane
