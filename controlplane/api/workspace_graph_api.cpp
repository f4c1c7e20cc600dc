#include "controlplane/api/workspace_graph_api.hpp"

#include <set>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/runs/capsule_attention.hpp"
#include "controlplane/runs/workspace_graph.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxSelected = 1000;

// {"capsuleIds"?: [ids of this Workspace]}: nullopt for every Capsule.
Result<std::optional<std::set<std::string>>> parse_selection(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return std::optional<std::set<std::string>>{};
  auto body = parse_object(text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(*body, {"capsuleIds"}));
  auto ids = get_optional_array(*body, "capsuleIds");
  if (!ids) return std::unexpected(ids.error());
  if (!*ids) return std::optional<std::set<std::string>>{};
  if ((*ids)->empty() || (*ids)->size() > kMaxSelected)
    return fail(errc::kInvalidArgument,
                "capsuleIds must list 1 to 1000 Capsules of the Workspace; leave it out to plan "
                "every Capsule");
  std::set<std::string> out;
  for (const auto& v : **ids) {
    if (!v.is_string()) return fail(errc::kInvalidArgument, "capsuleIds must list Capsule ids");
    out.emplace(v.get_string());
  }
  return std::optional<std::set<std::string>>{std::move(out)};
}

json::object latest_run_json(const std::vector<Run>& latest) {
  if (latest.empty()) return {};
  const Run& r = latest.front();
  return json::object{{"id", r.id}, {"type", protocol::to_string(r.type)}, {"status", r.status}};
}

}  // namespace

void WorkspaceGraphApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("GET", "/api/v1/workspaces/{}/graph", a.none({Role::viewer, Scope::workspace}),
        [this](auto&, auto& p) { return graph(p[0]); });
  r.add_async("POST", "/api/v1/workspaces/{}/plan", a.json_body({Role::operator_, Scope::workspace}),
              [this](const HttpRequest& req, const RouteParams& p) {
                return async_plan_workspace(actor(req), req, p[0]);
              });
  r.add("GET", "/api/v1/workspace-plans/{}", a.none({Role::viewer, Scope::workspace_plan}),
        [this](auto&, auto& p) { return get_workspace_plan(p[0]); });
}

HttpResponse WorkspaceGraphApi::graph(const std::string& workspace_id) {
  auto ws = d_.catalog.get_workspace(workspace_id);
  if (!ws) return error_response(ws.error());
  auto capsules = d_.catalog.list_capsules(workspace_id);
  if (!capsules) return error_response(capsules.error());
  auto dependencies = d_.dependencies.in_workspace(workspace_id);
  if (!dependencies) return error_response(dependencies.error());
  auto shares = d_.shares.list(workspace_id);
  if (!shares) return error_response(shares.error());
  const std::int64_t now = d_.clock.now_unix();
  json::array nodes;
  std::set<std::string> here;
  for (const auto& c : *capsules) {
    auto attention = load_capsule_attention(d_, c, now);
    if (!attention) return error_response(attention.error());
    auto latest = d_.runs.list_runs(c.id, 1);
    if (!latest) return error_response(latest.error());
    // The Capsule's status at a glance: destroyed, else its latest Run's status, else new.
    const std::string status = c.destroyed_at    ? "destroyed"
                               : latest->empty() ? "new"
                                                 : latest->front().status;
    json::object node{{"capsuleId", c.id},
                      {"workspaceId", c.workspace_id},
                      {"name", c.name},
                      {"status", status},
                      {"external", false},
                      {"destroyed", c.destroyed_at.has_value()},
                      {"needsAttention", !attention->empty()},
                      {"attention", to_json(*attention)}};
    node["latestRun"] = latest->empty() ? json::value(nullptr) : json::value(latest_run_json(*latest));
    nodes.push_back(std::move(node));
    here.insert(c.id);
  }
  json::array edges;
  std::set<std::string> external;
  for (const auto& d : *dependencies) {
    json::object edge = to_json(d);
    edge["kind"] = "dependency";
    edges.push_back(std::move(edge));
    if (!here.contains(d.producer_capsule_id)) external.insert(d.producer_capsule_id);
  }
  for (const auto& s : *shares) {
    json::object edge = to_json(s);
    edge["kind"] = "outputShare";
    edges.push_back(std::move(edge));
  }
  // A producer of another Workspace appears by id only: a viewer here may hold no role there.
  for (const auto& id : external) {
    auto producer = d_.catalog.get_capsule(id);
    if (!producer) return error_response(producer.error());
    nodes.push_back(json::object{{"capsuleId", id},
                                 {"workspaceId", producer->workspace_id},
                                 {"external", true}});
  }
  auto order = graph_order(*capsules, *dependencies);
  return json_response(200, json::object{{"workspaceId", workspace_id},
                                         {"nodes", std::move(nodes)},
                                         {"edges", std::move(edges)},
                                         {"order", json::array(order.begin(), order.end())}});
}

boost::asio::awaitable<HttpResponse> WorkspaceGraphApi::async_plan_workspace(
    std::string actor, const HttpRequest& req, const std::string& workspace_id) {
  auto selection = parse_selection(req.body);
  if (!selection) co_return error_response(selection.error());
  auto ws = d_.catalog.get_workspace(workspace_id);
  if (!ws) co_return error_response(ws.error());
  auto all = d_.catalog.list_capsules(workspace_id);
  if (!all) co_return error_response(all.error());
  auto dependencies = d_.dependencies.in_workspace(workspace_id);
  if (!dependencies) co_return error_response(dependencies.error());
  std::set<std::string> live;
  for (const auto& c : *all)
    if (!c.destroyed_at) live.insert(c.id);
  std::set<std::string> chosen = live;
  if (*selection) {
    for (const auto& id : **selection)
      if (!live.contains(id))
        co_return error_response(Error{std::string(errc::kInvalidArgument),
                                       "capsuleIds: " + id +
                                           " is not a Capsule of this Workspace that is not "
                                           "destroyed"});
    chosen = with_downstream(**selection, *dependencies);
    std::erase_if(chosen, [&](const std::string& id) { return !live.contains(id); });
  }
  if (chosen.empty())
    co_return error_response(Error{std::string(errc::kInvalidArgument),
                                   "workspace " + workspace_id + " has no Capsule to plan"});
  std::vector<Capsule> capsules;
  for (const auto& c : *all)
    if (chosen.contains(c.id)) capsules.push_back(c);
  // Every Capsule's Connections are usable and every ref resolves before anything is created: a
  // workspace plan starts whole or not at all.
  WorkspacePlan plan{.workspace_id = workspace_id, .created_by = actor};
  for (const auto& id : graph_order(capsules, *dependencies)) {
    const Capsule& capsule = *std::ranges::find(capsules, id, &Capsule::id);
    if (auto usable = check_connections(d_, capsule); !usable)
      co_return error_response(usable.error());
    auto commit = co_await async_resolve_head(d_, capsule);
    if (!commit) co_return error_response(commit.error().with_context("capsule " + capsule.id));
    plan.steps.push_back(WorkspacePlanStep{
        .capsule_id = id, .source_commit = *commit,
        .producers = producers_among(id, chosen, *dependencies)});
  }
  auto created = in_transaction(d_.db, [&]() -> Result<WorkspacePlan> {
    auto stored = d_.workspace_plans.create(std::move(plan));
    if (!stored) return stored;
    AuditEvent e{.actor = actor, .action = "workspace.plan_requested",
                 .workspace_id = workspace_id};
    json::array ids;
    for (const auto& step : stored->steps) ids.emplace_back(step.capsule_id);
    e.detail = {{"workspacePlanId", stored->id}, {"capsuleIds", std::move(ids)}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    TAKOSUMI_TRY(d_.planner.advance(workspace_id));
    return d_.workspace_plans.get(stored->id);
  });
  if (!created) co_return error_response(created.error());
  d_.waiters.notify();
  co_return workspace_plan_response(201, *created);
}

HttpResponse WorkspaceGraphApi::get_workspace_plan(const std::string& id) {
  auto plan = d_.workspace_plans.get(id);
  if (!plan) return error_response(plan.error());
  return workspace_plan_response(200, *plan);
}

HttpResponse WorkspaceGraphApi::workspace_plan_response(int status, const WorkspacePlan& plan) {
  auto progress = plan_progress(d_, plan);
  if (!progress) return error_response(progress.error());
  json::array steps;
  for (const auto& p : *progress) {
    const auto optional_id = [](const std::optional<Run>& r) {
      return r ? json::value(r->id) : json::value(nullptr);
    };
    steps.push_back(json::object{
        {"capsuleId", p.step->capsule_id},
        {"sourceCommit", p.step->source_commit},
        {"waitsFor", json::array(p.step->producers.begin(), p.step->producers.end())},
        {"state", p.state},
        {"waitingFor", json::array(p.waiting_for.begin(), p.waiting_for.end())},
        {"planRunId", optional_id(p.plan)},
        {"applyRunId", optional_id(p.apply)}});
  }
  return json_response(status, json::object{{"id", plan.id},
                                            {"workspaceId", plan.workspace_id},
                                            {"createdBy", plan.created_by},
                                            {"createdAt", time_value(plan.created_at)},
                                            {"status", plan_status(*progress)},
                                            {"steps", std::move(steps)}});
}

}  // namespace takosumi::controlplane
