#include "controlplane/api/state_version_api.hpp"

#include "common/error_codes.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/api/page_cursor.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

json::object skipped_capsule(const Capsule& c, const Error& why) {
  return {{"capsuleId", c.id}, {"capsuleName", c.name}, {"reason", why.message}};
}

bool is_connection_refusal(const Error& e) {
  return e.code == errc::kConnectionRevoked || e.code == errc::kConnectionExpired;
}

}  // namespace

void StateVersionApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("GET", "/api/v1/capsules/{}/state-versions", a.none({Role::viewer, Scope::capsule}),
        [this](auto& req, auto& p) { return state_versions(req, p[0]); });
  r.add("GET", "/api/v1/workspaces/{}/current-state-versions",
        a.none({Role::viewer, Scope::workspace}),
        [this](auto&, auto& p) { return current_state_versions(p[0]); });
  r.add("GET", "/api/v1/state-versions/{}", a.none({Role::viewer, Scope::state_version}),
        [this](auto&, auto& p) { return get_state_version(p[0]); });
  r.add("POST", "/api/v1/state-versions/{}/rollback-plan",
        a.none({Role::operator_, Scope::state_version}),
        [this](auto& req, auto& p) { return rollback_plan(req, p[0]); });
  r.add("POST", "/api/v1/capsules/{}/drift-check", a.none({Role::operator_, Scope::capsule}),
        [this](auto& req, auto& p) { return drift_check_capsule(actor(req), p[0]); });
  r.add("POST", "/api/v1/workspaces/{}/drift-check", a.none({Role::operator_, Scope::workspace}),
        [this](auto& req, auto& p) { return drift_check_workspace(actor(req), p[0]); });
  // Destroying a Capsule ends it: the owner's decision, not an operator's.
  r.add_async("DELETE", "/api/v1/capsules/{}", a.none({Role::owner, Scope::capsule}),
              [this](const HttpRequest& req, const RouteParams& p) {
                return async_destroy(actor(req), p[0]);
              });
}

HttpResponse StateVersionApi::state_versions(const HttpRequest& req, const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  auto limit = query_int(req, "limit", 50, 1, 100);
  if (!limit) return error_response(limit.error());
  auto before = query_cursor(req, "the state versions of capsule " + capsule_id);
  if (!before) return error_response(before.error());
  // One row past the page tells whether another page exists.
  auto list = d_.states.list(capsule_id, static_cast<int>(*limit) + 1, *before);
  if (!list) return error_response(list.error());
  json::value next = nullptr;
  if (static_cast<std::int64_t>(list->size()) > *limit) {
    list->pop_back();
    next = encode_cursor("the state versions of capsule " + capsule_id, list->back().generation);
  }
  return json_response(200, json::object{{"capsuleId", capsule_id},
                                         {"stateVersions", to_json_array(*list)},
                                         {"nextCursor", next}});
}

HttpResponse StateVersionApi::get_state_version(const std::string& id) {
  auto sv = d_.states.get(id);
  if (!sv) return error_response(sv.error());
  return json_response(200, to_json(*sv));
}

HttpResponse StateVersionApi::current_state_versions(const std::string& workspace_id) {
  auto capsules = d_.catalog.list_capsules(workspace_id);
  if (!capsules) return error_response(capsules.error());
  json::array out;
  for (const auto& c : *capsules) {
    auto sv = d_.states.current(c.id);
    if (!sv) return error_response(sv.error());
    json::value v = nullptr;
    if (*sv) v = to_json(**sv);
    out.push_back(json::object{{"capsuleId", c.id},
                               {"capsuleName", c.name},
                               {"destroyed", c.destroyed_at.has_value()},
                               {"stateVersion", v}});
  }
  return json_response(200, json::object{{"workspaceId", workspace_id}, {"capsules", std::move(out)}});
}


HttpResponse StateVersionApi::rollback_plan(const HttpRequest& req,
                                            const std::string& state_version_id) {
  auto target = d_.states.get(state_version_id);
  if (!target) return error_response(target.error());
  auto capsule = d_.catalog.get_capsule(target->capsule_id);
  if (!capsule) return error_response(capsule.error());
  if (auto usable = check_connections(d_, *capsule); !usable) return error_response(usable.error());
  auto destroyed = d_.runs.is_destroy_result(*target);
  if (!destroyed) return error_response(destroyed.error());
  // Rolling back to a destroyed generation destroys the Capsule: the owner's decision, and not
  // while others consume it, as for DELETE /api/v1/capsules/{id}.
  if (*destroyed) {
    if (auto owner = require_role(principal_of(req), Role::owner, capsule->workspace_id,
                                  "capsule " + capsule->id);
        !owner)
      return error_response(owner.error());
    if (auto free = check_no_consumers(d_, *capsule); !free) return error_response(free.error());
  }
  return create_run(d_, actor(req), [&] {
    return d_.runs.create_rollback_plan(*capsule, *target, *destroyed);
  });
}

Result<StateVersion> StateVersionApi::drift_pin(const Capsule& capsule) {
  auto current = d_.states.current(capsule.id);
  if (!current) return std::unexpected(current.error());
  if (!*current)
    return fail(errc::kNoStateVersion,
                "capsule " + capsule.id + " has no StateVersion yet, so there is nothing to compare"
                " with the real resources; plan and apply it first");
  if (capsule.destroyed_at)
    return fail(errc::kNoStateVersion,
                "capsule " + capsule.id + " was destroyed: its current StateVersion (generation " +
                    std::to_string((*current)->generation) +
                    ") holds no resources, so there is nothing to check; plan and apply to use it again");
  return std::move(**current);
}

HttpResponse StateVersionApi::drift_check_capsule(const std::string& actor,
                                                  const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  auto pinned = drift_pin(*capsule);
  if (!pinned) return error_response(pinned.error());
  if (auto usable = check_connections(d_, *capsule); !usable) return error_response(usable.error());
  return create_run(d_, actor, [&]() -> Result<Run> {
    auto runs = d_.runs.create_drift_checks({{*capsule, std::move(*pinned)}});
    if (!runs) return std::unexpected(runs.error());
    return std::move(runs->front());
  });
}

HttpResponse StateVersionApi::drift_check_workspace(const std::string& actor,
                                                    const std::string& workspace_id) {
  auto capsules = d_.catalog.list_capsules(workspace_id);
  if (!capsules) return error_response(capsules.error());
  std::vector<RunStore::DriftTarget> targets;
  json::array skipped;
  std::optional<Error> refused;  // the first Capsule skipped for its Connections
  for (const auto& c : *capsules) {
    auto pinned = drift_pin(c);
    Status usable = pinned ? check_connections(d_, c) : Status{};
    if (pinned && usable) {
      targets.push_back({c, std::move(*pinned)});
    } else if (!usable && is_connection_refusal(usable.error())) {
      skipped.push_back(skipped_capsule(c, usable.error()));
      if (!refused) refused = usable.error();
    } else if (!pinned && pinned.error().code == errc::kNoStateVersion) {
      skipped.push_back(skipped_capsule(c, pinned.error()));
    } else {
      return error_response(pinned ? usable.error() : pinned.error());
    }
  }
  if (targets.empty() && refused) return error_response(*refused);
  if (targets.empty())
    return error_response(Error{std::string(errc::kNoStateVersion),
                                "no capsule of workspace " + workspace_id +
                                    " has a StateVersion to check (" +
                                    std::to_string(capsules->size()) +
                                    " capsules); plan and apply a capsule first"});
  auto runs = in_transaction(d_.db, [&]() -> Result<std::vector<Run>> {
    auto created = d_.runs.create_drift_checks(targets);
    if (!created) return created;
    for (const auto& run : *created)
      TAKOSUMI_TRY(d_.audit.record(run_event(actor, "run.created", run,
                                             {{"type", protocol::to_string(run.type)}})));
    return created;
  });
  if (!runs) return error_response(runs.error());
  d_.waiters.notify();
  return json_response(201, json::object{{"workspaceId", workspace_id},
                                         {"runs", to_json_array(*runs)},
                                         {"skipped", std::move(skipped)}});
}

boost::asio::awaitable<HttpResponse> StateVersionApi::async_destroy(std::string actor,
                                                                    const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) co_return error_response(capsule.error());
  // Its consumers' next plans would find nothing published: they are unlinked first, on purpose
  // (said first, whatever else would refuse the delete).
  if (auto free = check_no_consumers(d_, *capsule); !free) co_return error_response(free.error());
  auto current = d_.states.current(capsule_id);
  if (!current) co_return error_response(current.error());
  if (!*current)
    co_return error_response(Error{std::string(errc::kNoStateVersion),
                                   "capsule " + capsule_id + " has no StateVersion: nothing was"
                                   " ever applied, so there is nothing to destroy"});
  if (capsule->destroyed_at)
    co_return error_response(Error{std::string(errc::kConflict),
                                   "capsule " + capsule_id + " is already destroyed (generation " +
                                       std::to_string((*current)->generation) +
                                       " is empty); to use it again, plan and apply"});
  if (auto usable = check_connections(d_, *capsule); !usable) co_return error_response(usable.error());
  auto commit = co_await async_resolve_head(d_, *capsule);
  if (!commit) co_return error_response(commit.error());
  co_return create_run(d_, actor,
                       [&] { return d_.runs.create_destroy_plan(*capsule, *commit); });
}

}  // namespace takosumi::controlplane
