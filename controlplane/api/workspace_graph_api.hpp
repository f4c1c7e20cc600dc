#pragma once
// The public API's Workspace graph and workspace plans (docs/passing-values.md): the Capsules
// with their status and attention and the Dependency and OutputShare edges between them; and
// planning a whole Workspace (or some Capsules and everything downstream) in graph order.
#include <boost/asio/awaitable.hpp>

#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class WorkspaceGraphApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the WorkspaceGraphApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse graph(const std::string& workspace_id);
  boost::asio::awaitable<HttpResponse> async_plan_workspace(std::string actor,
                                                            const HttpRequest& req,
                                                            const std::string& workspace_id);
  HttpResponse get_workspace_plan(const std::string& id);
  HttpResponse workspace_plan_response(int status, const WorkspacePlan& plan);
};

}  // namespace takosumi::controlplane
