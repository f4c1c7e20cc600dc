#include "controlplane/api/public_api.hpp"

namespace takosumi::controlplane {

void PublicApi::register_routes(Router& r) {
  const PublicRouteAccess access(access_);
  workspaces_.register_routes(r, access);
  graph_.register_routes(r, access);
  capsules_.register_routes(r, access);
  runs_.register_routes(r, access);
  state_versions_.register_routes(r, access);
  connections_.register_routes(r, access);
  dependencies_.register_routes(r, access);
  shares_.register_routes(r, access);
  backups_.register_routes(r, access);
  tokens_.register_routes(r, access);
  activity_.register_routes(r, access);
  agents_.register_routes(r, access);
  pool_tokens_.register_routes(r, access);
  pools_.register_routes(r, access);
  offline_.register_routes(r, access);
}

}  // namespace takosumi::controlplane
