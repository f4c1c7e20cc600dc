#include "controlplane/api/run_api.hpp"

#include "common/error_codes.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/runs/apply_admission.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

// The apply request body is optional: {} or {"acceptDataLoss": true|false}.
Result<bool> parse_accept_data_loss(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return false;
  auto o = parse_object(body, kMaxJsonBody);
  if (!o) return std::unexpected(o.error());
  TAKOSUMI_TRY(check_known_fields(*o, {"acceptDataLoss"}));
  return get_bool_or(*o, "acceptDataLoss", false);
}

}  // namespace

void RunApi::register_routes(Router& r, const PublicRouteAccess& a) {
  const Need viewer{Role::viewer, Scope::run};
  const Need operator_{Role::operator_, Scope::run};
  r.add("GET", "/api/v1/capsules/{}/runs", a.none({Role::viewer, Scope::capsule}),
        [this](auto& req, auto& p) { return list_runs(req, p[0]); });
  r.add("GET", "/api/v1/runs/{}", a.none(viewer), [this](auto&, auto& p) { return get_run(p[0]); });
  r.add("POST", "/api/v1/runs/{}/apply", a.json_body(operator_),
        [this](auto& req, auto& p) { return apply(req, p[0]); });
  r.add("POST", "/api/v1/runs/{}/cancel", a.none(operator_),
        [this](auto& req, auto& p) { return cancel(req, p[0]); });
  r.add("GET", "/api/v1/runs/{}/logs", a.none(viewer), [this](auto&, auto& p) { return logs(p[0]); });
  r.add("GET", "/api/v1/runs/{}/plan", a.none(viewer), [this](auto&, auto& p) { return plan_view(p[0]); });
}

HttpResponse RunApi::list_runs(const HttpRequest& req, const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  auto limit = query_int(req, "limit", 50, 1, 100);
  if (!limit) return error_response(limit.error());
  auto runs = d_.runs.list_runs(capsule_id, static_cast<int>(*limit));
  if (!runs) return error_response(runs.error());
  return json_response(200, json::object{{"runs", to_json_array(*runs)}});
}

HttpResponse RunApi::get_run(const std::string& id) {
  auto run = d_.runs.get_run(id);
  if (!run) return error_response(run.error());
  // Only here: a list of Runs leaves the changes out (each may be megabytes).
  auto changes = d_.runs.resource_changes(id);
  if (!changes) return error_response(changes.error());
  run->resource_changes_json = std::move(*changes);
  return json_response(200, to_json(*run));
}

HttpResponse RunApi::apply(const HttpRequest& req, const std::string& plan_run_id) {
  auto accept = parse_accept_data_loss(req.body);
  if (!accept) return error_response(accept.error());
  auto candidate = load_apply_candidate(d_.runs, d_.states, d_.blobs, plan_run_id);
  if (!candidate) return error_response(candidate.error());
  const Run& plan = candidate->plan;
  auto capsule = d_.catalog.get_capsule(plan.capsule_id);
  if (!capsule) return error_response(capsule.error());
  if (auto usable = check_connections(d_, *capsule); !usable) return error_response(usable.error());
  // A Dependency may have been made between the destroy plan and its apply.
  if (plan.type == protocol::RunType::destroy_plan)
    if (auto free = check_no_consumers(d_, *capsule); !free) return error_response(free.error());
  auto admitted = admit_apply(*candidate, *accept);
  if (!admitted) return error_response(admitted.error());
  return create_run(
      d_, actor(req), [&] { return d_.runs.create_apply(plan, admitted->data_loss_accepted); },
      *accept);
}

HttpResponse RunApi::cancel(const HttpRequest& req, const std::string& run_id) {
  auto run = in_transaction(d_.db, [&]() -> Result<Run> {
    auto cancelled = d_.runs.cancel(run_id);
    if (!cancelled) return cancelled;
    TAKOSUMI_TRY(d_.audit.record(run_event(actor(req), "run.cancel_requested", *cancelled)));
    // A queued Run ends at once; a running one ends when its agent reports, except one out as an
    // offline bundle, whose agent nobody can tell: it ends here (end_exported records that).
    if (cancelled->finished()) {
      TAKOSUMI_TRY(d_.audit.record(run_event(actor(req), "run.finished", *cancelled,
                                             {{"status", cancelled->status},
                                              {"failureCode", std::string(errc::kCancelled)}})));
      return cancelled;
    }
    TAKOSUMI_TRY(d_.queue.leases().end_exported(run_id, actor(req)));
    return d_.runs.get_run(run_id);
  });
  if (!run) return error_response(run.error());
  return json_response(200, to_json(*run));
}

// The plan view of a plan Run, or of the plan an apply runs, as its agent uploaded it (redacted on
// the agent, its shape checked at upload).
HttpResponse RunApi::plan_view(const std::string& run_id) {
  auto run = d_.runs.get_run(run_id);
  if (!run) return error_response(run.error());
  if (run->type == protocol::RunType::drift_check)
    return error_response(Error{std::string(errc::kNotFound),
                                "run " + run_id + " is a drift_check: it plans nothing; what drifted "
                                "is in its drift report (GET /api/v1/runs/" + run_id + ")"});
  if (run->type == protocol::RunType::apply) {
    if (!run->planned_by)
      return error_response(Error{std::string(errc::kNotFound), "apply run " + run_id + " names no plan"});
    const std::string capsule = run->capsule_id;
    run = d_.runs.get_run(*run->planned_by);
    if (!run) return error_response(run.error());
    // A record brought by an import names its plan unchecked: never another Capsule's view.
    if (run->capsule_id != capsule)
      return error_response(Error{std::string(errc::kNotFound),
                                  "apply run " + run_id + " names a plan of another Capsule"});
  }
  if (!run->plan_view_sha256) {
    if (!run->finished())
      return error_response(Error{std::string(errc::kConflict),
                                  "run " + run->id + " is " + run->status +
                                      ": its plan view comes with its report"});
    return error_response(Error{std::string(errc::kNotFound),
                                "run " + run->id + " has no plan view (an agent from before plan "
                                "views brings none): its log holds the plan as sealed"});
  }
  auto path = d_.blobs.path_for(*run->plan_view_sha256);
  if (!path) return error_response(path.error());
  return HttpResponse{200, "application/json", {}, *path};
}

HttpResponse RunApi::logs(const std::string& run_id) {
  auto run = d_.runs.get_run(run_id);
  if (!run) return error_response(run.error());
  auto chunks = d_.logs.list(run_id);
  if (!chunks) return error_response(chunks.error());
  return json_response(200, logs_to_json(run_id, *chunks));
}

}  // namespace takosumi::controlplane
