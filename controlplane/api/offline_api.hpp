#pragma once
// Offline Runs on the connected side (docs/air-gapped.md, docs/protocol.md "Offline Run bundles"):
//   POST /api/v1/agents/offline       an offline agent from its public keys (admin)
//   POST /api/v1/runs/{id}/bundle     the Run's offline Run bundle for one such agent (operator)
//   POST /api/v1/runs/{id}/result     a result bundle brought back (operator)
// The export is a claim (RunClaims::claim_for_export) whose manifest is signed as every manifest
// is, with the source as a Git pack and a longer validity. The import checks the agent's
// signature before anything else costs, then records the result through the same steps as an
// online completion (runs/run_intake.hpp): the same lease and generation fencing, idempotent per
// attempt. A result the fencing refuses is kept (a blob named in the audit record) and the answer
// says the Capsule needs an operator.
#include <boost/asio/awaitable.hpp>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

// Default and longest validity of a Run bundle (and its lease).
inline constexpr std::int64_t kDefaultBundleSeconds = 7 * 86400;
inline constexpr std::int64_t kMaxBundleSeconds = 90 * 86400;

class OfflineApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse register_offline_agent(const HttpRequest& req);
  boost::asio::awaitable<HttpResponse> async_export(const HttpRequest& req, std::string run_id);
  boost::asio::awaitable<HttpResponse> async_import(const HttpRequest& req, std::string run_id);
};

}  // namespace takosumi::controlplane
