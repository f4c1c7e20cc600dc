#include "controlplane/api/dependency_api.hpp"

#include "common/error_codes.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/api/principal.hpp"
#include "controlplane/store/model/dependency_spec.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

AuditEvent dependency_event(std::string_view actor, std::string_view action, const Dependency& d) {
  AuditEvent e{.actor = std::string(actor), .action = std::string(action),
               .workspace_id = d.workspace_id, .capsule_id = d.consumer_capsule_id};
  e.detail = {{"dependencyId", d.id}, {"producerCapsuleId", d.producer_capsule_id}};
  return e;
}

}  // namespace

void DependencyApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("POST", "/api/v1/capsules/{}/dependencies", a.json_body({Role::owner, Scope::capsule}),
        [this](auto& req, auto& p) { return create_dependency(req, p[0]); });
  r.add("GET", "/api/v1/capsules/{}/dependencies", a.none({Role::viewer, Scope::capsule}),
        [this](auto& req, auto& p) { return list_dependencies(req, p[0]); });
  r.add("DELETE", "/api/v1/dependencies/{}", a.none({Role::owner, Scope::dependency}),
        [this](auto& req, auto& p) { return delete_dependency(req, p[0]); });
}

HttpResponse DependencyApi::create_dependency(const HttpRequest& req,
                                              const std::string& consumer_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto parsed = parse_dependency_request(*body);
  if (!parsed) return error_response(parsed.error());
  auto created = in_transaction(d_.db, [&]() -> Result<Dependency> {
    auto consumer = d_.catalog.get_capsule(consumer_id);
    if (!consumer) return std::unexpected(consumer.error());
    std::optional<OutputShare> share;
    if (parsed->output_share_id) {
      auto found = d_.shares.get(*parsed->output_share_id);
      // Unknown is refused as another Workspace's share is (dependency_spec.cpp): no probing.
      if (!found && found.error().code == errc::kNotFound)
        return fail(errc::kInvalidArgument, "output share " + *parsed->output_share_id +
                                                " is not shared with this Workspace");
      if (!found) return std::unexpected(found.error());
      share = std::move(*found);
      parsed->producer_capsule_id = share->producer_capsule_id;
    }
    auto producer = d_.catalog.get_capsule(parsed->producer_capsule_id);
    if (!producer && producer.error().code == errc::kNotFound)
      return fail(errc::kInvalidArgument, "capsule " + parsed->producer_capsule_id +
                                              " is not in this Workspace: Outputs cross "
                                              "Workspaces only through an OutputShare");
    if (!producer) return std::unexpected(producer.error());
    auto existing = d_.dependencies.as_consumer(consumer_id);
    if (!existing) return std::unexpected(existing.error());
    TAKOSUMI_TRY(check_dependency(*parsed, *consumer, *producer, share ? &*share : nullptr,
                                  *existing));
    auto destroying = d_.runs.destroy_pending(producer->id);
    if (!destroying) return std::unexpected(destroying.error());
    if (*destroying)
      return fail(errc::kConflict, "capsule " + producer->id +
                                       " is being destroyed (the apply of its destroy plan is "
                                       "queued or running): it will publish nothing");
    auto sensitive = d_.runs.sensitive_outputs(producer->id);
    if (!sensitive) return std::unexpected(sensitive.error());
    TAKOSUMI_TRY(check_not_sensitive(*parsed, *producer, *sensitive));
    auto dependency = d_.dependencies.create(*consumer, *producer, std::move(parsed->outputs),
                                             parsed->output_share_id);
    if (!dependency) return dependency;
    TAKOSUMI_TRY(d_.audit.record(dependency_event(actor(req), "dependency.created", *dependency)));
    return dependency;
  });
  if (!created) return error_response(created.error());
  return json_response(201, to_json(*created));
}

HttpResponse DependencyApi::list_dependencies(const HttpRequest& req,
                                               const std::string& capsule_id) {
  if (auto capsule = d_.catalog.get_capsule(capsule_id); !capsule)
    return error_response(capsule.error());
  auto as_producer = d_.dependencies.as_producer(capsule_id);
  if (!as_producer) return error_response(as_producer.error());
  // A consumer in another Workspace (through an OutputShare) is that Workspace's to show: the
  // giving side sees only those it may read itself.
  const Principal& caller = principal_of(req);
  std::erase_if(*as_producer, [&](const Dependency& d) {
    return !caller.has(Role::viewer, d.workspace_id);
  });
  auto as_consumer = d_.dependencies.as_consumer(capsule_id);
  if (!as_consumer) return error_response(as_consumer.error());
  return json_response(200, json::object{{"asProducer", to_json_array(*as_producer)},
                                         {"asConsumer", to_json_array(*as_consumer)}});
}

HttpResponse DependencyApi::delete_dependency(const HttpRequest& req, const std::string& id) {
  auto removed = in_transaction(d_.db, [&]() -> Status {
    auto dependency = d_.dependencies.get(id);
    if (!dependency) return std::unexpected(dependency.error());
    TAKOSUMI_TRY(d_.dependencies.remove(id));
    return d_.audit.record(dependency_event(actor(req), "dependency.deleted", *dependency));
  });
  if (!removed) return error_response(removed.error());
  return HttpResponse{204, "application/json", "", {}, {}};
}

}  // namespace takosumi::controlplane
