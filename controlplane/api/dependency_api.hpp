#pragma once
// The public API's Dependencies (docs/passing-values.md): a Capsule takes public Outputs of
// another Capsule of its Workspace as variables. Create (409 dependency_cycle for an edge that
// closes a cycle), list a Capsule's both ways, delete.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class DependencyApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the DependencyApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_dependency(const HttpRequest& req, const std::string& consumer_id);
  HttpResponse list_dependencies(const HttpRequest& req, const std::string& capsule_id);
  HttpResponse delete_dependency(const HttpRequest& req, const std::string& id);
};

}  // namespace takosumi::controlplane
