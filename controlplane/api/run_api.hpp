#pragma once
// The public API's Runs: a Capsule's Runs, one Run, its logs, its plan view, cancel, and apply (a
// plan Run is applied once runs/apply_admission.hpp admits it; the request may accept its data-loss
// marks).
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class RunApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the RunApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse list_runs(const HttpRequest& req, const std::string& capsule_id);
  HttpResponse get_run(const std::string& id);
  HttpResponse apply(const HttpRequest& req, const std::string& plan_run_id);
  HttpResponse cancel(const HttpRequest& req, const std::string& run_id);
  HttpResponse logs(const std::string& run_id);
  HttpResponse plan_view(const std::string& run_id);
};

}  // namespace takosumi::controlplane
