#pragma once
// The public API's scoped API tokens (docs/security.md, "Who may call the API"): create
// (the secret is in the answer once, and stored only as its SHA-256), list, revoke. The admin
// manages every token; an owner of a Workspace manages the tokens whose every role is in
// Workspaces it owns, and can give only roles in those. Tokens never create admins.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class TokenApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the TokenApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_token(const HttpRequest& req);
  HttpResponse list_tokens(const HttpRequest& req);
  HttpResponse revoke_token(const HttpRequest& req, const std::string& id);
};

}  // namespace takosumi::controlplane
