#pragma once
// Pool tokens through the API (docs/operations.md "Pool tokens"): made (the secret answered
// once), listed and revoked by the admin. Those in the configuration stay valid beside them.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class PoolTokenApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the PoolTokenApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_pool_token(const HttpRequest& req);
  HttpResponse list_pool_tokens(const HttpRequest& req);
  HttpResponse revoke_pool_token(const HttpRequest& req, const std::string& id);
};

}  // namespace takosumi::controlplane
