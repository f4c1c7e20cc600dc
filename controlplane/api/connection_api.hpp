#pragma once
// The public API's Connections: create (values sealed at once), list by Workspace, read, revoke.
// Revoking twice changes nothing. A Capsule's assignment of Connections is CapsuleApi's.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class ConnectionApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the ConnectionApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_connection(const HttpRequest& req);
  HttpResponse list_connections(const HttpRequest& req);
  HttpResponse get_connection(const std::string& id);
  HttpResponse revoke_connection(const HttpRequest& req, const std::string& id);
};

}  // namespace takosumi::controlplane
