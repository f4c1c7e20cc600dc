// End to end: the real takosumi-control, takosumi-agent and OpenTofu over loopback HTTP.
#include <gtest/gtest.h>

#include <fstream>

#include "crypto/envelope.hpp"
#include "crypto/keys.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

json::object mapped_outputs() {
  return {{"endpoint", json::object{{"from", "endpoint"}, {"type", "string"}, {"required", true}}},
          {"greeting", json::object{{"from", "greeting"}, {"type", "string"}}},
          // Mapped on purpose: a sensitive output must still never be published.
          {"dbPassword", json::object{{"from", "db_password"}, {"type", "string"}}}};
}

class PlanApplyTest : public ::testing::Test {
 protected:
  std::filesystem::path out_dir() { return stack_.root() / "real-world"; }
  std::string make_capsule(const std::string& greeting) {
    std::filesystem::create_directories(out_dir());
    repo_ = std::make_unique<TestGitRepo>(stack_.root() / "repo");
    repo_->commit({{"main.tf", example_module(greeting)}});
    return stack_.create_capsule(repo_->url(), json::object{{"out_dir", out_dir().string()}},
                                 mapped_outputs());
  }
  Stack stack_;
  std::unique_ptr<TestGitRepo> repo_;
};

TEST_F(PlanApplyTest, ApplyAppendsStateVersionsAndPublishesOnlyMappedNonSensitiveOutputs) {
  const auto capsule = make_capsule("hello");
  auto plan = stack_.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  auto applied = stack_.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << stack_.agent_logs();

  auto versions = stack_.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0].at("generation").as_int64(), 1);

  auto outputs = stack_.api().get("/api/v1/capsules/" + capsule + "/outputs");
  ASSERT_EQ(outputs.status, 200u) << outputs.body;
  const auto& values = outputs.json.at("outputs").as_object();
  EXPECT_EQ(str(values, "greeting"), "hello");
  EXPECT_EQ(str(values, "endpoint"), "file://" + (out_dir() / "app.conf").string());
  EXPECT_FALSE(values.contains("dbPassword")) << "a sensitive output was published";
  EXPECT_FALSE(values.contains("internal_id")) << "an unmapped output was published";
  EXPECT_EQ(values.size(), 2u);

  // The generated password exists in reality; it must appear nowhere on the control plane.
  const auto password = read_text(out_dir() / "db.password");
  ASSERT_EQ(password.size(), 32u);
  EXPECT_TRUE(files_containing(stack_.data_dir(), password).empty())
      << "plaintext secret found in the control plane's data directory";
  for (const auto& target :
       {"/api/v1/runs/" + str(plan, "id"), "/api/v1/runs/" + str(applied, "id"),
        "/api/v1/runs/" + str(plan, "id") + "/logs", "/api/v1/runs/" + str(applied, "id") + "/logs",
        "/api/v1/capsules/" + capsule, "/api/v1/capsules/" + capsule + "/outputs",
        "/api/v1/capsules/" + capsule + "/state-versions"}) {
    auto r = stack_.api().get(target);
    EXPECT_EQ(r.status, 200u) << target;
    EXPECT_EQ(r.body.find(password), std::string::npos) << target << " leaks the password";
    EXPECT_EQ(r.body.find("internal_id"), std::string::npos) << target << " shows an unmapped output";
  }

  // A second change appends generation 2; generation 1 is untouched.
  const auto first_digest = str(versions[0].as_object(), "ciphertextSha256");
  repo_->commit({{"main.tf", example_module("world")}});
  auto plan2 = stack_.plan(capsule);
  ASSERT_EQ(str(plan2, "status"), "succeeded") << json::serialize(plan2);
  // The new content replaces the file, a data-bearing resource: flagged, and applied only when
  // the request accepts it.
  ASSERT_EQ(plan2.at("dataLoss").as_array().size(), 1u) << json::serialize(plan2);
  auto applied2 = stack_.apply(str(plan2, "id"), /*accept_data_loss=*/true);
  ASSERT_EQ(str(applied2, "status"), "succeeded") << json::serialize(applied2);
  versions = stack_.state_versions(capsule);
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0].at("generation").as_int64(), 2);
  EXPECT_EQ(str(versions[1].as_object(), "ciphertextSha256"), first_digest);
  auto outputs2 = stack_.api().get("/api/v1/capsules/" + capsule + "/outputs");
  EXPECT_EQ(str(outputs2.json.at("outputs").as_object(), "greeting"), "world");
  EXPECT_EQ(read_text(out_dir() / "app.conf"), "greeting=world\n");
}

TEST_F(PlanApplyTest, AlteredSavedPlanFailsWithPlanDigestMismatchAndAddsNoStateVersion) {
  const auto capsule = make_capsule("hello");
  auto plan = stack_.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  // Replace the stored plan with a different, validly encrypted one: anyone holding the control
  // plane's public key can produce such an envelope, so only the digest can catch it.
  auto storage = crypto::load_box_key(stack_.data_dir() / "keys/storage.key");
  ASSERT_TRUE(storage) << storage.error().message;
  // The saved plan is the only blob so far (no StateVersion yet).
  std::vector<std::filesystem::path> blobs;
  for (const auto& e : std::filesystem::directory_iterator(stack_.data_dir() / "blobs"))
    if (e.is_regular_file()) blobs.push_back(e.path());
  ASSERT_EQ(blobs.size(), 1u);
  const auto blob = blobs[0];
  auto original = crypto::read_envelope_prefix(blob);
  ASSERT_TRUE(original);
  const auto forged_plain = stack_.root() / "forged.tfplan";
  std::ofstream(forged_plain) << "not the reviewed plan";
  auto header = original->header;
  ASSERT_TRUE(crypto::encrypt_file(forged_plain, stack_.root() / "forged.env", header,
                                   storage->public_key));
  std::filesystem::permissions(blob, std::filesystem::perms::owner_all);
  std::filesystem::copy_file(stack_.root() / "forged.env", blob,
                             std::filesystem::copy_options::overwrite_existing);

  auto applied = stack_.apply(str(plan, "id"));
  EXPECT_EQ(str(applied, "status"), "failed");
  EXPECT_EQ(failure_code(applied), "plan_digest_mismatch") << json::serialize(applied);
  EXPECT_TRUE(stack_.state_versions(capsule).empty());
  EXPECT_FALSE(std::filesystem::exists(out_dir() / "app.conf")) << "something was applied";
}

TEST_F(PlanApplyTest, TamperedStateCiphertextFailsTheRunAndAddsNoStateVersion) {
  const auto capsule = make_capsule("hello");
  auto plan = stack_.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded");
  ASSERT_EQ(str(stack_.apply(str(plan, "id")), "status"), "succeeded");
  auto versions = stack_.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u);
  const auto blob = stack_.data_dir() / "blobs" / str(versions[0].as_object(), "ciphertextSha256");
  {
    std::fstream f(blob, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-40, std::ios::end);
    char c = 0;
    f.read(&c, 1);
    f.seekp(-40, std::ios::end);
    c ^= 0x5a;
    f.write(&c, 1);
  }
  auto plan2 = stack_.plan(capsule);
  EXPECT_EQ(str(plan2, "status"), "failed");
  EXPECT_EQ(failure_code(plan2), "state_integrity_failed") << json::serialize(plan2);
  EXPECT_EQ(stack_.state_versions(capsule).size(), 1u);
}

// A module's variables of every type, configured as JSON values (a string still converts to a
// number, as before typed variables), reach tofu and come back as typed public Outputs.
TEST_F(PlanApplyTest, TypedVariablesReachTheModuleAndTypedOutputsArePublished) {
  repo_ = std::make_unique<TestGitRepo>(stack_.root() / "repo");
  repo_->commit({{"main.tf", R"(
variable "enabled" { type = bool }
variable "replicas" { type = number }
variable "zones" { type = list(string) }
variable "tags" { type = map(string) }
variable "settings" {
  type = object({ size = number, name = string })
}
variable "legacy" { type = number }
output "enabled" { value = var.enabled }
output "double" { value = var.replicas * 2 }
output "zones" { value = var.zones }
output "team" { value = var.tags["team"] }
output "settings" { value = var.settings }
output "legacy_plus_one" { value = var.legacy + 1 }
)"}});
  const json::object variables{{"enabled", true},
                               {"replicas", 3},
                               {"zones", json::array{"eu-1a", "eu-1b"}},
                               {"tags", json::object{{"team", "infra"}}},
                               {"settings", json::object{{"size", 2}, {"name", "blue"}}},
                               {"legacy", "7"}};
  auto mapping = [](const char* from, const char* type) {
    return json::object{{"from", from}, {"type", type}, {"required", true}};
  };
  const auto capsule = stack_.create_capsule(
      repo_->url(), variables,
      {{"enabled", mapping("enabled", "bool")},
       {"double", mapping("double", "number")},
       {"zones", mapping("zones", "any")},
       {"team", mapping("team", "string")},
       {"settings", mapping("settings", "any")},
       {"legacyPlusOne", mapping("legacy_plus_one", "number")}});
  EXPECT_EQ(stack_.capsule(capsule).at("variables"), variables) << "the Capsule shows other values";

  auto plan = stack_.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  auto applied = stack_.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << stack_.agent_logs();

  auto outputs = stack_.api().get("/api/v1/capsules/" + capsule + "/outputs");
  ASSERT_EQ(outputs.status, 200u) << outputs.body;
  const auto& values = outputs.json.at("outputs").as_object();
  EXPECT_EQ(values.at("enabled"), json::value(true));
  EXPECT_EQ(values.at("double"), json::value(6));
  EXPECT_EQ(values.at("zones"), (json::array{"eu-1a", "eu-1b"}));
  EXPECT_EQ(values.at("team"), json::value("infra"));
  EXPECT_EQ(values.at("settings"), (json::object{{"name", "blue"}, {"size", 2}}));
  EXPECT_EQ(values.at("legacyPlusOne"), json::value(8));
}

}  // namespace
}  // namespace takosumi::testing
