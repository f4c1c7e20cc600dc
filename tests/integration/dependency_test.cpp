// Dependencies end to end (docs/passing-values.md): a producer's public Outputs reach its
// consumer's plans as typed variables, over the real control plane, agent and OpenTofu.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

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
  ASSERT_EQ(str(stack_.apply(str(produced, "id")), "status"), "succeeded") << stack_.agent_logs();

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
  std::string changed = kProducer;
  changed.replace(changed.find("vpc-0a1b2c"), 10, "vpc-9z8y7x");
  repos_.front()->commit({{"main.tf", changed}});
  auto replanned = stack_.plan(network);
  ASSERT_EQ(str(replanned, "status"), "succeeded") << json::serialize(replanned);
  ASSERT_EQ(str(stack_.apply(str(replanned, "id")), "status"), "succeeded") << stack_.agent_logs();
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

}  // namespace
}  // namespace takosumi::testing
