#include "controlplane/api/public_api.hpp"

#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {

Status PublicApi::authorize(const HttpRequest& req) const {
  auto token = req.bearer_token();
  if (!token || !crypto::secrets_equal(*token, d_.api_token.reveal_as_string()))
    return fail(errc::kUnauthorized, "missing or wrong API token (Authorization: Bearer …)");
  return {};
}

void PublicApi::register_routes(Router& r) {
  const Authenticator token = [this](const HttpRequest& head) { return authorize(head); };
  const PublicRouteAccess access{{token, RouteBody::none}, {token, RouteBody::json}};
  workspaces_.register_routes(r, access);
  capsules_.register_routes(r, access);
  runs_.register_routes(r, access);
  state_versions_.register_routes(r, access);
  connections_.register_routes(r, access);
  dependencies_.register_routes(r, access);
  activity_.register_routes(r, access);
  agents_.register_routes(r, access);
}

}  // namespace takosumi::controlplane
