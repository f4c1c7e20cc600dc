// Dependencies end to end (docs/passing-values.md): a producer's public Outputs reach its
// consumer's plans as typed variables, over the real control plane, agent and OpenTofu.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "tests/support/http_client.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

constexpr const char* kProducer = R"(
output "vpc_id" { value = "vpc-0a1b2c" }
output "zones" { value = ["eu-1a", "eu-1b"] }
output "api_token" {
  value     = "dependency-canary-4d1f9e"
  sensitive = true
}
)";

constexpr const char* kConsumer = R"(
variable "vpc_id" { type = string }
variable "zones" { type = list(string) }
variable "token" {
  type    = string
  default = "none"
}
output "placement" { value = "${var.vpc_id}/${join(",", var.zones)}" }
output "token_seen" { value = var.token }
)";

json::object mapping(const char* from, const char* type, bool required = true) {
  return {{"from", from}, {"type", type}, {"required", required}};
}

class DependencyTest : public ::testing::Test {
 protected:
  std::string capsule(const std::string& name, const char* module, const json::object& allowlist) {
    repos_.push_back(std::make_unique<TestGitRepo>(stack_.root() / ("repo-" + name)));
    repos_.back()->commit({{"main.tf", module}});
    return stack_.create_capsule(repos_.back()->url(), {}, allowlist, name);
  }
  JsonResponse depend(const std::string& consumer, const std::string& producer,
                      const json::object& outputs) {
    return stack_.api().post("/api/v1/capsules/" + consumer + "/dependencies",
                             json::object{{"producerCapsuleId", producer}, {"outputs", outputs}});
  }
  // The producer (the first repository) publishes another vpc_id: a new commit, planned and
  // applied.
  void publish_new_vpc(const std::string& producer) {
    std::string changed = kProducer;
    changed.replace(changed.find("vpc-0a1b2c"), 10, "vpc-9z8y7x");
    repos_.front()->commit({{"main.tf", changed}});
    auto replanned = stack_.plan(producer);
    ASSERT_EQ(str(replanned, "status"), "succeeded") << json::serialize(replanned);
    ASSERT_EQ(str(stack_.apply(str(replanned, "id")), "status"), "succeeded") << stack_.agent_logs();
  }
  Stack stack_;
  std::vector<std::unique_ptr<TestGitRepo>> repos_;
};

TEST_F(DependencyTest, APlanGetsTheProducersPublicOutputsOnlyOnceTheyArePublished) {
  const auto network = capsule("network", kProducer,
                               {{"vpcId", mapping("vpc_id", "string")},
                                {"zones", mapping("zones", "any")},
                                // Mapped on purpose: a sensitive Output is never published.
                                {"apiToken", mapping("api_token", "string", false)}});
  const auto app = capsule("app", kConsumer,
                           {{"placement", mapping("placement", "string")},
                            {"tokenSeen", mapping("token_seen", "string")}});

  auto not_public = depend(app, network, {{"vpc_id", mapping("vpc_id", "string")}});
  EXPECT_EQ(not_public.status, 400u) << not_public.body;
  EXPECT_NE(not_public.body.find("not a public Output"), std::string::npos) << not_public.body;

  auto created = depend(app, network,
                        {{"vpc_id", mapping("vpcId", "string")},
                         {"zones", mapping("zones", "any")},
                         {"token", mapping("apiToken", "string", false)}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string dependency_id = str(created.json.as_object(), "id");

  // The producer has published nothing yet: the consumer's plan cannot have its inputs.
  auto early = stack_.plan(app);
  EXPECT_EQ(str(early, "status"), "failed") << json::serialize(early);
  EXPECT_EQ(str(early.at("failure").as_object(), "code"), "dependency_output_missing")
      << json::serialize(early);

  auto produced = stack_.plan(network);
  ASSERT_EQ(str(produced, "status"), "succeeded")
      << json::serialize(produced) << stack_.agent_logs();
  // From the producer's first plan the control plane knows the module marks api_token sensitive
  // (the plan reports it, by name): a new mapping of it is refused outright, before anything was
  // applied, instead of failing or starving the consumer's Runs later.
  EXPECT_NE(json::serialize(produced.at("refusedOutputs")).find("apiToken"), std::string::npos)
      << json::serialize(produced);
  const auto other = capsule("other", kConsumer, {{"placement", mapping("placement", "string")}});
  auto sensitive = depend(other, network, {{"token", mapping("apiToken", "string")}});
  EXPECT_EQ(sensitive.status, 400u) << sensitive.body;
  EXPECT_NE(sensitive.body.find("marks this Output sensitive"), std::string::npos)
      << sensitive.body;
  ASSERT_EQ(str(stack_.apply(str(produced, "id")), "status"), "succeeded") << stack_.agent_logs();
  auto elsewhere = stack_.api().post("/api/v1/workspaces", json::object{{"name", "elsewhere"}});
  ASSERT_EQ(elsewhere.status, 201u) << elsewhere.body;
  auto shared = stack_.api().post(
      "/api/v1/output-shares",
      json::object{{"producerCapsuleId", network},
                   {"toWorkspaceId", str(elsewhere.json.as_object(), "id")},
                   {"outputs", json::array{"apiToken"}}});
  EXPECT_EQ(shared.status, 400u) << shared.body;
  EXPECT_NE(shared.body.find("marks this Output sensitive"), std::string::npos) << shared.body;

  auto plan = stack_.plan(app);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  const auto& inputs = plan.at("dependencyInputs").as_array();
  ASSERT_EQ(inputs.size(), 1u) << json::serialize(plan);
  EXPECT_EQ(str(inputs[0].as_object(), "dependencyId"), dependency_id);
  EXPECT_EQ(str(inputs[0].as_object(), "producerCapsuleId"), network);
  EXPECT_EQ(str(inputs[0].as_object(), "stateVersionId"),
            str(stack_.state_versions(network)[0].as_object(), "id"));
  EXPECT_EQ(inputs[0].at("variables"), (json::array{"vpc_id", "zones"}));
  auto applied = stack_.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << stack_.agent_logs();

  auto outputs = stack_.api().get("/api/v1/capsules/" + app + "/outputs");
  ASSERT_EQ(outputs.status, 200u) << outputs.body;
  EXPECT_EQ(str(outputs.json.at("outputs").as_object(), "placement"), "vpc-0a1b2c/eu-1a,eu-1b");
  EXPECT_EQ(str(outputs.json.at("outputs").as_object(), "tokenSeen"), "none")
      << "a sensitive Output reached a consumer";
  EXPECT_TRUE(files_containing(stack_.data_dir(), "dependency-canary-4d1f9e").empty());
  EXPECT_FALSE(stack_.capsule(app).at("needsAttention").as_bool())
      << json::serialize(stack_.capsule(app));

  // The producer changes what it publishes: the consumer shows it until it is planned again, and
  // its next plan takes the new value.
  ASSERT_NO_FATAL_FAILURE(publish_new_vpc(network));
  auto stale = stack_.capsule(app);
  ASSERT_TRUE(stale.at("needsAttention").as_bool()) << json::serialize(stale);
  const auto& notice = stale.at("attention").as_array().at(0).as_object();
  EXPECT_EQ(str(notice, "code"), "upstream_changed");
  EXPECT_EQ(str(notice, "dependencyId"), dependency_id);
  EXPECT_EQ(str(notice, "producerCapsuleId"), network);
  EXPECT_NE(str(notice, "outputsSha256"), str(inputs[0].as_object(), "outputsSha256"));
  auto fresh = stack_.plan(app);
  ASSERT_EQ(str(fresh, "status"), "succeeded") << json::serialize(fresh) << stack_.agent_logs();
  EXPECT_EQ(str(fresh.at("dependencyInputs").as_array().at(0).as_object(), "outputsSha256"),
            str(notice, "outputsSha256"));
  EXPECT_FALSE(stack_.capsule(app).at("needsAttention").as_bool());
  ASSERT_EQ(str(stack_.apply(str(fresh, "id")), "status"), "succeeded") << stack_.agent_logs();
  auto moved = stack_.api().get("/api/v1/capsules/" + app + "/outputs");
  EXPECT_EQ(str(moved.json.at("outputs").as_object(), "placement"), "vpc-9z8y7x/eu-1a,eu-1b");

  auto cycle = depend(network, app, {{"placement", mapping("placement", "string")}});
  EXPECT_EQ(cycle.status, 409u) << cycle.body;
  EXPECT_NE(cycle.body.find("dependency_cycle"), std::string::npos) << cycle.body;
  EXPECT_NE(cycle.body.find(network + " -> " + app + " -> " + network), std::string::npos)
      << cycle.body;

  auto of_network = stack_.api().get("/api/v1/capsules/" + network + "/dependencies");
  ASSERT_EQ(of_network.status, 200u) << of_network.body;
  EXPECT_EQ(of_network.json.at("asProducer").as_array().size(), 1u);
  EXPECT_TRUE(of_network.json.at("asConsumer").as_array().empty());

  // The consumer cannot take a secret under a name its Dependency sets, and the producer cannot
  // be destroyed under it.
  auto twin = stack_.api().put("/api/v1/capsules/" + app + "/sensitive-variables",
                               json::object{{"sensitiveVariables", json::object{{"vpc_id", "x"}}}});
  EXPECT_EQ(twin.status, 400u) << twin.body;
  EXPECT_NE(twin.body.find(dependency_id), std::string::npos) << twin.body;
  auto destroy = stack_.api().request("DELETE", "/api/v1/capsules/" + network);
  EXPECT_EQ(destroy.status, 409u) << destroy.body;
  EXPECT_NE(destroy.body.find("still has consumers: " + app), std::string::npos) << destroy.body;

  auto removed = stack_.api().request("DELETE", "/api/v1/dependencies/" + dependency_id);
  EXPECT_EQ(removed.status, 204u) << removed.body;
  auto again = stack_.api().request("DELETE", "/api/v1/dependencies/" + dependency_id);
  EXPECT_EQ(again.status, 404u) << again.body;
  auto of_app = stack_.api().get("/api/v1/capsules/" + app + "/dependencies");
  EXPECT_TRUE(of_app.json.at("asConsumer").as_array().empty()) << of_app.body;
}

constexpr const char* kDns = R"(
variable "placement" { type = string }
output "record" { value = "app.example IN TXT ${var.placement}" }
)";

// A workspace plan follows the graph: a consumer's plan is created only once every producer it
// depends on has applied, and it gets the values that apply published.
TEST_F(DependencyTest, AWorkspacePlanPlansEachConsumerOnlyAfterItsProducersApplied) {
  const auto network = capsule("network", kProducer,
                               {{"vpcId", mapping("vpc_id", "string")},
                                {"zones", mapping("zones", "any")}});
  const auto app = capsule("app", kConsumer, {{"placement", mapping("placement", "string")}});
  const auto dns = capsule("dns", kDns, {{"record", mapping("record", "string")}});
  ASSERT_EQ(depend(app, network, {{"vpc_id", mapping("vpcId", "string")},
                                  {"zones", mapping("zones", "any")}}).status, 201u);
  ASSERT_EQ(depend(dns, app, {{"placement", mapping("placement", "string")}}).status, 201u);

  const std::string workspace = "/api/v1/workspaces/" + stack_.workspace_id();
  auto graph = stack_.api().get(workspace + "/graph");
  ASSERT_EQ(graph.status, 200u) << graph.body;
  EXPECT_EQ(graph.json.at("order"), (json::array{network.c_str(), app.c_str(), dns.c_str()}));
  EXPECT_EQ(graph.json.at("nodes").as_array().size(), 3u);
  EXPECT_EQ(graph.json.at("edges").as_array().size(), 2u);

  auto started = stack_.api().post(workspace + "/plan", json::object{});
  ASSERT_EQ(started.status, 201u) << started.body;
  const std::string plan_url = "/api/v1/workspace-plans/" + str(started.json.as_object(), "id");
  auto step = [&](std::size_t i) {
    auto r = stack_.api().get(plan_url);
    return r.json.at("steps").as_array().at(i).as_object();
  };
  EXPECT_EQ(str(step(0), "capsuleId"), network);
  EXPECT_EQ(str(step(1), "state"), "waiting");
  EXPECT_EQ(step(1).at("waitingFor"), (json::array{network.c_str()}));
  EXPECT_EQ(str(step(2), "state"), "waiting");

  // Each layer: its plan runs, nothing downstream is planned before its apply succeeds.
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_FALSE(step(i).at("planRunId").is_null()) << stack_.api().get(plan_url).body;
    auto plan = stack_.wait_run(str(step(i), "planRunId"));
    ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
    EXPECT_EQ(str(step(i), "state"), "awaiting_apply");
    if (i + 1 < 3) {
      EXPECT_TRUE(step(i + 1).at("planRunId").is_null()) << "planned before its producer applied";
    }
    ASSERT_EQ(str(stack_.apply(str(plan, "id")), "status"), "succeeded") << stack_.agent_logs();
    EXPECT_EQ(str(step(i), "state"), "done");
  }
  auto done = stack_.api().get(plan_url);
  EXPECT_EQ(str(done.json.as_object(), "status"), "succeeded") << done.body;
  auto outputs = stack_.api().get("/api/v1/capsules/" + dns + "/outputs");
  EXPECT_EQ(str(outputs.json.at("outputs").as_object(), "record"),
            "app.example IN TXT vpc-0a1b2c/eu-1a,eu-1b");

  // A changed producer Output marks its direct consumer, not the consumer's own consumer (what
  // app publishes has not changed yet).
  ASSERT_NO_FATAL_FAILURE(publish_new_vpc(network));
  auto app_now = stack_.capsule(app);
  ASSERT_TRUE(app_now.at("needsAttention").as_bool()) << json::serialize(app_now);
  EXPECT_EQ(str(app_now.at("attention").as_array().at(0).as_object(), "code"), "upstream_changed");
  EXPECT_FALSE(stack_.capsule(dns).at("needsAttention").as_bool())
      << json::serialize(stack_.capsule(dns));
  auto graph_now = stack_.api().get(workspace + "/graph");
  for (const auto& node : graph_now.json.at("nodes").as_array())
    EXPECT_EQ(str(node.as_object(), "status"), "succeeded") << graph_now.body;

  // Only the chosen Capsule and what is downstream of it.
  auto partial = stack_.api().post(workspace + "/plan", json::object{{"capsuleIds", json::array{app.c_str()}}});
  ASSERT_EQ(partial.status, 201u) << partial.body;
  const auto& steps = partial.json.at("steps").as_array();
  ASSERT_EQ(steps.size(), 2u) << partial.body;
  EXPECT_EQ(str(steps[0].as_object(), "capsuleId"), app);
  EXPECT_EQ(str(steps[1].as_object(), "capsuleId"), dns);
  auto foreign = stack_.api().post(workspace + "/plan",
                                   json::object{{"capsuleIds", json::array{"cap_nope"}}});
  EXPECT_EQ(foreign.status, 400u) << foreign.body;
}

// An OutputShare carries public Outputs into another Workspace only after the receiving
// Workspace's owner approves it, and only until either side revokes it.
TEST_F(DependencyTest, AShareCrossesWorkspacesOnlyWhileApprovedByTheReceiver) {
  const auto network = capsule("network", kProducer,
                               {{"vpcId", mapping("vpc_id", "string")},
                                {"zones", mapping("zones", "any")}});
  const std::string giving = stack_.workspace_id();
  auto team = stack_.api().post("/api/v1/workspaces", json::object{{"name", "team-b"}});
  ASSERT_EQ(team.status, 201u) << team.body;
  const std::string receiving = str(team.json.as_object(), "id");
  repos_.push_back(std::make_unique<TestGitRepo>(stack_.root() / "repo-app-b"));
  repos_.back()->commit({{"main.tf", kConsumer}});
  auto app_b = stack_.api().post(
      "/api/v1/workspaces/" + receiving + "/capsules",
      json::object{{"name", "app"},
                   {"source", json::object{{"gitUrl", repos_.back()->url()}, {"ref", "main"},
                                           {"modulePath", ""}}},
                   {"outputAllowlist",
                    json::object{{"placement", mapping("placement", "string")}}}});
  ASSERT_EQ(app_b.status, 201u) << app_b.body;
  const std::string app = str(app_b.json.as_object(), "id");

  auto token = [&](const std::string& workspace_id, const char* role) {
    auto r = stack_.api().post("/api/v1/tokens",
                               json::object{{"name", std::string(role) + "-token"},
                                            {"roles", json::object{{workspace_id, role}}}});
    EXPECT_EQ(r.status, 201u) << r.body;
    return std::pair{str(r.json.as_object(), "id"),
                     HttpClient(stack_.port(), str(r.json.as_object(), "secret"))};
  };
  auto [giver_id, giver] = token(giving, "owner");
  auto [receiver_id, receiver] = token(receiving, "owner");
  auto [operator_id, operator_b] = token(receiving, "operator");

  auto offered = giver.post("/api/v1/output-shares",
                            json::object{{"producerCapsuleId", network},
                                         {"toWorkspaceId", receiving},
                                         {"outputs", json::array{"vpcId", "zones"}}});
  ASSERT_EQ(offered.status, 201u) << offered.body;
  const std::string share = str(offered.json.as_object(), "id");
  EXPECT_EQ(str(offered.json.as_object(), "status"), "pending");
  const json::object use{{"outputShareId", share},
                         {"outputs", json::object{{"vpc_id", mapping("vpcId", "string")},
                                                  {"zones", mapping("zones", "any")}}}};
  auto early = receiver.post("/api/v1/capsules/" + app + "/dependencies", use);
  EXPECT_EQ(early.status, 409u) << "a pending share is not usable: " << early.body;

  // The giving side cannot push values into another Workspace, nor can a mere operator accept.
  auto pushed = giver.post("/api/v1/output-shares/" + share + "/approve", json::object{});
  EXPECT_EQ(pushed.status, 403u) << pushed.body;
  auto by_operator = operator_b.post("/api/v1/output-shares/" + share + "/approve", json::object{});
  EXPECT_EQ(by_operator.status, 403u) << by_operator.body;
  EXPECT_NE(by_operator.body.find("owner"), std::string::npos) << by_operator.body;
  auto approved = receiver.post("/api/v1/output-shares/" + share + "/approve", json::object{});
  ASSERT_EQ(approved.status, 200u) << approved.body;
  EXPECT_EQ(str(approved.json.as_object(), "status"), "active");
  auto used = receiver.post("/api/v1/capsules/" + app + "/dependencies", use);
  ASSERT_EQ(used.status, 201u) << used.body;
  // Each side lists the share, in its direction.
  auto given = giver.get("/api/v1/output-shares?workspaceId=" + giving);
  ASSERT_EQ(given.status, 200u) << given.body;
  ASSERT_EQ(given.json.at("given").as_array().size(), 1u) << given.body;
  EXPECT_EQ(given.json.at("given").at(0).at("id"), share.c_str());
  EXPECT_TRUE(given.json.at("received").as_array().empty()) << given.body;
  auto received = receiver.get("/api/v1/output-shares?workspaceId=" + receiving);
  ASSERT_EQ(received.status, 200u) << received.body;
  ASSERT_EQ(received.json.at("received").as_array().size(), 1u) << received.body;
  EXPECT_EQ(received.json.at("received").at(0).at("id"), share.c_str());
  EXPECT_TRUE(received.json.at("given").as_array().empty()) << received.body;

  // Roles, seen from outside: each token sees and does only what its Workspace role allows.
  auto [viewer_id, viewer_b] = token(receiving, "viewer");
  EXPECT_EQ(viewer_b.get("/api/v1/capsules/" + app).status, 200u);
  auto viewer_plan = viewer_b.post("/api/v1/capsules/" + app + "/plan", json::object{});
  EXPECT_EQ(viewer_plan.status, 403u) << viewer_plan.body;
  EXPECT_NE(viewer_plan.body.find("operator"), std::string::npos) << viewer_plan.body;
  auto operator_connection = operator_b.post(
      "/api/v1/connections",
      json::object{{"workspaceId", receiving}, {"name", "cloud"},
                   {"provider", "registry.opentofu.org/hashicorp/aws"},
                   {"authMode", "env"},
                   {"values", json::object{{"AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"}}}});
  EXPECT_EQ(operator_connection.status, 403u) << operator_connection.body;
  EXPECT_NE(operator_connection.body.find("owner"), std::string::npos) << operator_connection.body;
  // The giving Workspace's owner sees nothing of the receiving one: not its Capsules, its graph,
  // nor, in the producer's Dependencies, the consumer on the other side of the share.
  for (const std::string& path : {"/api/v1/capsules/" + app, "/api/v1/workspaces/" + receiving +
                                  "/graph", "/api/v1/capsules/" + app + "/dependencies"}) {
    auto seen = giver.get(path);
    EXPECT_EQ(seen.status, 403u) << path << ": " << seen.body;
  }
  auto of_producer = giver.get("/api/v1/capsules/" + network + "/dependencies");
  ASSERT_EQ(of_producer.status, 200u) << of_producer.body;
  EXPECT_TRUE(of_producer.json.at("asProducer").as_array().empty()) << of_producer.body;
  auto by_admin = stack_.api().get("/api/v1/capsules/" + network + "/dependencies");
  EXPECT_EQ(by_admin.json.at("asProducer").as_array().size(), 1u) << by_admin.body;

  auto produced = stack_.plan(network);
  ASSERT_EQ(str(produced, "status"), "succeeded") << stack_.agent_logs();
  ASSERT_EQ(str(stack_.apply(str(produced, "id")), "status"), "succeeded") << stack_.agent_logs();
  auto plan_as_operator = [&] {
    auto r = operator_b.post("/api/v1/capsules/" + app + "/plan", json::object{});
    EXPECT_EQ(r.status, 201u) << r.body;
    return stack_.wait_run(str(r.json.as_object(), "id"));
  };
  auto plan = plan_as_operator();
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  const auto& input = plan.at("dependencyInputs").as_array().at(0).as_object();
  EXPECT_EQ(str(input, "outputShareId"), share);
  EXPECT_EQ(input.at("variables"), (json::array{"vpc_id", "zones"}));

  auto revoked = giver.post("/api/v1/output-shares/" + share + "/revoke", json::object{});
  ASSERT_EQ(revoked.status, 200u) << revoked.body;
  EXPECT_EQ(str(revoked.json.as_object(), "status"), "revoked");
  auto after = plan_as_operator();
  EXPECT_EQ(str(after, "status"), "failed") << json::serialize(after);
  EXPECT_EQ(str(after.at("failure").as_object(), "code"), "output_share_revoked")
      << json::serialize(after);
  // What a Run already took stays recorded as it was.
  auto before = stack_.api().get("/api/v1/runs/" + str(plan, "id"));
  EXPECT_EQ(before.json.at("dependencyInputs"), plan.at("dependencyInputs"));

  // Every change is in both Workspaces' activity, by the token that made it.
  for (const std::string& workspace_id : {giving, receiving}) {
    auto activity = stack_.api().get("/api/v1/workspaces/" + workspace_id + "/activity");
    std::vector<std::string> seen;
    for (const auto& e : activity.json.at("events").as_array())
      if (str(e.as_object(), "action").starts_with("output_share."))
        seen.push_back(str(e.as_object(), "action") + " " + str(e.as_object(), "actor"));
    EXPECT_EQ(seen, (std::vector<std::string>{"output_share.revoked token:" + giver_id,
                                              "output_share.approved token:" + receiver_id,
                                              "output_share.created token:" + giver_id}))
        << activity.body;
  }

  // The receiving side may end a share too, and both sides see who did.
  auto second = giver.post("/api/v1/output-shares",
                           json::object{{"producerCapsuleId", network},
                                        {"toWorkspaceId", receiving},
                                        {"outputs", json::array{"zones"}}});
  ASSERT_EQ(second.status, 201u) << second.body;
  const std::string second_id = str(second.json.as_object(), "id");
  auto declined = receiver.post("/api/v1/output-shares/" + second_id + "/revoke", json::object{});
  ASSERT_EQ(declined.status, 200u) << declined.body;
  EXPECT_EQ(str(declined.json.as_object(), "status"), "revoked");
  for (const std::string& workspace_id : {giving, receiving}) {
    auto activity = stack_.api().get("/api/v1/workspaces/" + workspace_id + "/activity");
    const auto& newest = activity.json.at("events").at(0).as_object();
    EXPECT_EQ(str(newest, "action"), "output_share.revoked") << activity.body;
    EXPECT_EQ(str(newest, "actor"), "token:" + receiver_id) << activity.body;
  }
}

// A producer that still has consumers is not destroyed, whether or not it was ever applied: the
// refusal names the consumers first.
TEST_F(DependencyTest, AProducerWithConsumersIsNotDeleted) {
  const auto network = capsule("network", kProducer, {{"vpcId", mapping("vpc_id", "string")}});
  const auto app = capsule("app", kConsumer, {{"placement", mapping("placement", "string")}});
  ASSERT_EQ(depend(app, network, {{"vpc_id", mapping("vpcId", "string")}}).status, 201u);
  auto refused = stack_.api().request("DELETE", "/api/v1/capsules/" + network, "");
  EXPECT_EQ(refused.status, 409u) << refused.body;
  EXPECT_NE(refused.body.find(app), std::string::npos) << refused.body;
}

}  // namespace
}  // namespace takosumi::testing
