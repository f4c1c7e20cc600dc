#pragma once
// The public API's OutputShares (docs/passing-values.md): the giving Workspace's owner offers
// named public Outputs of one of its Capsules to another Workspace (pending); only the receiving
// Workspace's owner approves (active); either side's owner revokes (for good). Each change is
// audited in both Workspaces. A share has two sides, so its handlers check the roles themselves.
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

// Offers a Workspace may have waiting for approval at once.
inline constexpr std::int64_t kMaxPendingOffers = 64;

class OutputShareApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the OutputShareApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_share(const HttpRequest& req);
  HttpResponse list_shares(const HttpRequest& req);
  HttpResponse get_share(const HttpRequest& req, const std::string& id);
  HttpResponse approve_share(const HttpRequest& req, const std::string& id);
  HttpResponse revoke_share(const HttpRequest& req, const std::string& id);
  // The share, when the caller holds `need` in one of `sides` of it (forbidden otherwise, also
  // for an unknown id, unless the caller is the admin).
  enum class Sides { giving, receiving, either };
  Result<OutputShare> share_for(const HttpRequest& req, const std::string& id, Role need,
                                Sides sides);
  // Moves the share to status `to` through the store (once: a second move changes nothing) when
  // the caller owns one of `sides`, audited as `action` on both sides.
  using StoreMove = Result<OutputShare> (OutputShareStore::*)(std::string_view, std::string_view);
  HttpResponse move_share(const HttpRequest& req, const std::string& id, Sides sides,
                          std::string_view to, std::string_view action, StoreMove move);
  // Records `action` in the giving and the receiving Workspace.
  Status audit_both(const HttpRequest& req, std::string_view action, const OutputShare& share,
                    bool receiver_exists = true);
};

}  // namespace takosumi::controlplane
