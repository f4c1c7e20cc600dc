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
  // The agent's own time is accounted for beside the runner's phases, which lie within agent.run.
  const auto& phases = plan.at("phaseMillis").as_object();
  for (const char* phase : {"agent.manifest", "agent.journal", "agent.download", "agent.run", "checkout", "plan"})
    EXPECT_TRUE(phases.contains(phase)) << phase << " in " << json::serialize(phases);
  if (phases.contains("agent.run") && phases.contains("plan"))
    EXPECT_GE(phases.at("agent.run").as_int64(), phases.at("plan").as_int64());
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
    // The plan as sealed (in the plan's log) names an unmapped Output that changes, never its value.
    std::string body = r.body;
    for (std::size_t at; (at = body.find("internal_id  # value not shown: not mapped by the Capsule")) !=
                         std::string::npos;)
      body.erase(at, 11);
    EXPECT_EQ(body.find("internal_id"), std::string::npos) << target << " shows an unmapped output";
  }
  // The plan view names every Output that changes, an unmapped one too, but never its value.
  for (const auto& target :
       {"/api/v1/runs/" + str(plan, "id") + "/plan", "/api/v1/runs/" + str(applied, "id") + "/plan"}) {
    auto r = stack_.api().get(target);
    EXPECT_EQ(r.status, 200u) << target << ": " << r.body;
    EXPECT_EQ(r.body.find(password), std::string::npos) << target << " leaks the password";
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

const json::object* find_named(const json::value& list, std::string_view key, std::string_view name) {
  for (const auto& v : list.as_array())
    if (str(v.as_object(), std::string(key).c_str()) == name) return &v.as_object();
  return nullptr;
}

// GET /api/v1/runs/{id}/plan: each resource's action and each attribute's before and after, made
// by the agent from the sealed plan; sensitive values and unknown ones as markers; Outputs by
// name, values only for mapped plain ones; an apply answers with the plan it runs; a plan whose
// only changes are Outputs names them.
TEST_F(PlanApplyTest, AReviewerReadsThePlanAttributeByAttribute) {
  const auto capsule = make_capsule("hello");
  auto plan = stack_.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  auto first = stack_.api().get("/api/v1/runs/" + str(plan, "id") + "/plan");
  ASSERT_EQ(first.status, 200u) << first.body;
  EXPECT_EQ(str(first.json.as_object(), "planDigest"), str(plan, "planDigest"));
  const auto& resources = first.json.at("resources");
  const auto* pw = find_named(resources, "address", "random_password.db");
  ASSERT_TRUE(pw) << first.body;
  EXPECT_EQ(json::serialize(pw->at("actions")), R"(["create"])");
  const auto* id = find_named(pw->at("attributes"), "path", "id");
  ASSERT_TRUE(id) << json::serialize(*pw);
  EXPECT_EQ(str(*id, "after"), "(known after apply)");
  EXPECT_TRUE(id->at("unknown").as_bool());
  // Unknown and sensitive: sensitive wins, as in tofu's own plan.
  const auto* result = find_named(pw->at("attributes"), "path", "result");
  ASSERT_TRUE(result) << json::serialize(*pw);
  EXPECT_EQ(str(*result, "after"), "(sensitive value)");
  const auto* length = find_named(pw->at("attributes"), "path", "length");
  ASSERT_TRUE(length);
  EXPECT_EQ(str(*length, "after"), "32");
  const auto* secret_file = find_named(resources, "address", "local_sensitive_file.password");
  ASSERT_TRUE(secret_file) << first.body;
  const auto* content = find_named(secret_file->at("attributes"), "path", "content");
  ASSERT_TRUE(content) << json::serialize(*secret_file);
  EXPECT_EQ(str(*content, "after"), "(sensitive value)");
  auto applied = stack_.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  EXPECT_EQ(stack_.api().get("/api/v1/runs/" + str(applied, "id") + "/plan").body, first.body);

  // A changed file is replaced, the attribute that forces it named; the mapped Output shows its
  // values, the unmapped one its name only.
  repo_->commit({{"main.tf", example_module("world")}});
  auto plan2 = stack_.plan(capsule);
  ASSERT_EQ(str(plan2, "status"), "succeeded") << json::serialize(plan2);
  auto second = stack_.api().get("/api/v1/runs/" + str(plan2, "id") + "/plan");
  ASSERT_EQ(second.status, 200u) << second.body;
  const auto* config = find_named(second.json.at("resources"), "address", "local_file.config");
  ASSERT_TRUE(config) << second.body;
  EXPECT_EQ(json::serialize(config->at("actions")), R"(["delete","create"])");
  const auto* changed = find_named(config->at("attributes"), "path", "content");
  ASSERT_TRUE(changed) << json::serialize(*config);
  EXPECT_EQ(str(*changed, "before"), R"("greeting=hello\n")");
  EXPECT_EQ(str(*changed, "after"), R"("greeting=world\n")");
  EXPECT_TRUE(changed->at("forcesReplacement").as_bool());
  const auto* greeting = find_named(second.json.at("outputs"), "name", "greeting");
  ASSERT_TRUE(greeting) << second.body;
  EXPECT_EQ(str(greeting->at("attributes").as_array().at(0).as_object(), "after"), R"("world")");
  const auto* internal = find_named(second.json.at("outputs"), "name", "internal_id");
  ASSERT_TRUE(internal) << second.body;
  EXPECT_EQ(str(*internal, "withheld"), "not mapped by the Capsule");
  EXPECT_TRUE(internal->at("attributes").as_array().empty());
  auto applied2 = stack_.apply(str(plan2, "id"), /*accept_data_loss=*/true);
  ASSERT_EQ(str(applied2, "status"), "succeeded") << json::serialize(applied2);

  // Only an Output changes: no resource counts, the Output is named in the view and the log.
  repo_->commit({{"main.tf", example_module("world") + "output \"extra\" { value = \"x\" }\n"}});
  auto plan3 = stack_.plan(capsule);
  ASSERT_EQ(str(plan3, "status"), "succeeded") << json::serialize(plan3);
  EXPECT_TRUE(plan3.at("hasChanges").as_bool());
  auto third = stack_.api().get("/api/v1/runs/" + str(plan3, "id") + "/plan");
  ASSERT_EQ(third.status, 200u) << third.body;
  EXPECT_TRUE(third.json.at("resources").as_array().empty()) << third.body;
  EXPECT_TRUE(find_named(third.json.at("outputs"), "name", "extra")) << third.body;
  const auto log = stack_.api().get("/api/v1/runs/" + str(plan3, "id") + "/logs").body;
  EXPECT_NE(log.find("Only Outputs change: extra."), std::string::npos) << log;

  // A drift check plans nothing: its drift report is where drift is read.
  auto drift = stack_.api().post("/api/v1/capsules/" + capsule + "/drift-check", json::object{});
  ASSERT_EQ(drift.status, 201u) << drift.body;
  auto drift_run = stack_.wait_run(str(drift.json.as_object(), "id"));
  auto none = stack_.api().get("/api/v1/runs/" + str(drift_run, "id") + "/plan");
  EXPECT_EQ(none.status, 404u) << none.body;
}

TEST_F(PlanApplyTest, AlteredSavedPlanFailsWithPlanDigestMismatchAndAddsNoStateVersion) {
  const auto capsule = make_capsule("hello");
  auto plan = stack_.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  // Replace the stored plan with a different, validly encrypted one: anyone holding the control
  // plane's public key can produce such an envelope, so only the digest can catch it.
  auto storage = crypto::load_box_key(stack_.data_dir() / "keys/storage.key");
  ASSERT_TRUE(storage) << storage.error().message;
  // The saved plan is the only envelope so far (no StateVersion yet; the plan view is JSON).
  std::vector<std::filesystem::path> blobs;
  for (const auto& e : std::filesystem::directory_iterator(stack_.data_dir() / "blobs"))
    if (e.is_regular_file() && crypto::read_envelope_prefix(e.path())) blobs.push_back(e.path());
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
