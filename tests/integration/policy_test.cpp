// Provider, provisioner and external-data policy with the real agent and OpenTofu: a refused
// module stops before `tofu init` installs or starts anything.
#include <gtest/gtest.h>

#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

constexpr const char* kNullModule = R"(terraform {
  required_providers {
    null = { source = "hashicorp/null" }
  }
}
resource "null_resource" "probe" {
  provisioner "local-exec" {
    command = "echo provisioner-ran"
  }
}
)";

class PolicyTest : public ::testing::Test {
 protected:
  json::object plan_with(const json::object& policy, const std::string& name) {
    auto capsule = stack_.create_capsule_from(json::object{
        {"name", name},
        {"source", json::object{{"gitUrl", repo_.url()}, {"ref", "main"}, {"modulePath", ""}}},
        {"outputAllowlist", json::object{}},
        {"policy", policy}});
    return stack_.plan(capsule);
  }
  std::string logs(const json::object& run) {
    return stack_.api().get("/api/v1/runs/" + str(run, "id") + "/logs").body;
  }
  void SetUp() override { repo_.commit({{"main.tf", kNullModule}}); }

  Stack stack_;
  TestGitRepo repo_{stack_.root() / "repo"};
};

TEST_F(PolicyTest, ADeniedProviderIsRefusedBeforeAnyProviderIsInstalled) {
  auto plan = plan_with(json::object{{"allowProvisioners", true},
                                     {"deniedProviders", json::array{"registry.opentofu.org/hashicorp/null"}}},
                        "denied");
  EXPECT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  EXPECT_EQ(failure_code(plan), "provider_policy_denied") << json::serialize(plan);
  EXPECT_NE(str(plan.at("failure").as_object(), "message").find("registry.opentofu.org/hashicorp/null"),
            std::string::npos);
  EXPECT_EQ(logs(plan).find("Initializing provider plugins"), std::string::npos)
      << "tofu init ran:\n" << logs(plan);
}

TEST_F(PolicyTest, AnAllowListWithoutTheProviderRefusesIt) {
  auto plan = plan_with(json::object{{"allowProvisioners", true},
                                     {"allowedProviders", json::array{"registry.opentofu.org/hashicorp/local"}}},
                        "allowlist");
  EXPECT_EQ(failure_code(plan), "provider_policy_denied") << json::serialize(plan);
  EXPECT_EQ(logs(plan).find("Initializing provider plugins"), std::string::npos);
}

TEST_F(PolicyTest, AProvisionerWithoutPermissionIsRefused) {
  auto plan = plan_with(json::object{}, "no-provisioners");
  EXPECT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  EXPECT_EQ(failure_code(plan), "provisioner_denied") << json::serialize(plan);
  EXPECT_NE(str(plan.at("failure").as_object(), "message").find("local-exec"), std::string::npos);
  EXPECT_EQ(logs(plan).find("Initializing provider plugins"), std::string::npos);

  // The same module with permission plans and applies, and the provisioner runs.
  auto allowed = plan_with(json::object{{"allowProvisioners", true}}, "provisioners");
  ASSERT_EQ(str(allowed, "status"), "succeeded") << json::serialize(allowed);
  auto applied = stack_.apply(str(allowed, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  EXPECT_NE(logs(applied).find("(local-exec): provisioner-ran"), std::string::npos) << logs(applied);
}

}  // namespace
}  // namespace takosumi::testing
