// The canary suite: unique strings planted as every kind of secret a Run handles — a Connection
// env value, a Connection file, a sensitive variable, a sensitive output, a sensitive resource
// attribute and a credential the module prints in an error — travel through plan, apply, a
// failing apply, a drift check and a rollback plan with the real control plane, agent and
// OpenTofu. The module prints every one of them on purpose; afterwards not one may be found on
// any surface: public API responses, the control plane's files (except encrypted blobs), the
// agent's log and everything left under the agent's directories.
#include <gtest/gtest.h>

#include <random>

#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

constexpr const char* kNullProvider = "registry.opentofu.org/hashicorp/null";

std::string random_tag() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 12; ++i) out += "0123456789abcdef"[rd() % 16];
  return out;
}

// Every local-exec line prints one canary; the module never names a canary in full, so a hit can
// only come from a value the Run handled. `generation` changes the trigger to make a new state.
std::string canary_module(const std::string& generation) {
  return R"HCL(terraform {
  required_providers {
    null = { source = "hashicorp/null" }
  }
}
variable "seed" { type = string }
variable "canary_var" {
  type      = string
  sensitive = true
}
variable "fail_apply" {
  type    = bool
  default = false
}
locals {
  out = "canaryout-${var.seed}"
  dsn = "postgres://app:canaryerr${var.seed}@db.internal/app"
}
resource "terraform_data" "attr" {
  input = sensitive("canaryattr-${var.seed}")
}
# The sensitive variable as a plain attribute: tofu shows it in the plan, the plan view must not.
resource "terraform_data" "plain_copy" {
  input = nonsensitive(var.canary_var)
}
resource "null_resource" "printer" {
  triggers = { generation = ")HCL" + generation + R"HCL(" }
  provisioner "local-exec" {
    command = <<-EOT
      echo "env=$CANARY_TOKEN"
      echo "file=$(cat "$CANARY_CREDENTIALS_FILE")"
      echo "var=${nonsensitive(var.canary_var)}"
      echo "attr=${nonsensitive(terraform_data.attr.output)}"
      echo "out=${local.out}"
      echo "dsn=${local.dsn}"
    EOT
  }
}
resource "null_resource" "fail" {
  count = var.fail_apply ? 1 : 0
  provisioner "local-exec" {
    command = "echo \"token=$CANARY_TOKEN var=${nonsensitive(var.canary_var)} dsn=${local.dsn}\" >&2; exit 3"
  }
}
output "secret_out" {
  value     = local.out
  sensitive = true
}
output "public_seed" { value = var.seed }
output "leaky_dsn" { value = local.dsn }
)HCL";
}

struct Canaries {
  std::string tag = random_tag();
  std::string env = "canaryenv" + tag + "x";
  std::string file = "canaryfile" + tag + "x";
  std::string var = "canaryvar" + tag + "x";
  std::string output = "canaryout-" + tag;
  std::string attr = "canaryattr-" + tag;
  std::string error = "canaryerr" + tag;

  std::vector<std::pair<std::string, std::string>> all() const {
    return {{"Connection env value", env}, {"Connection file", file},
            {"sensitive variable", var},   {"sensitive output", output},
            {"sensitive attribute", attr}, {"credential in an error message", error}};
  }
};

class CanaryTest : public ::testing::Test {
 protected:
  std::string create_connection(const std::string& name, const std::string& mode,
                                const std::string& key, const std::string& value) {
    auto r = stack_.api().post("/api/v1/connections",
                               json::object{{"workspaceId", stack_.workspace_id()},
                                            {"name", name},
                                            {"provider", kNullProvider},
                                            {"authMode", mode},
                                            {"values", json::object{{key, value}}}});
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.json.is_object() ? str(r.json.as_object(), "id") : "";
  }

  std::string create_capsule(const std::string& name, bool fail_apply) {
    json::object allow{
        {"publicSeed", json::object{{"from", "public_seed"}, {"type", "string"}}},
        {"secretOut", json::object{{"from", "secret_out"}, {"type", "string"}}},
        {"leakyDsn", json::object{{"from", "leaky_dsn"}, {"type", "string"}}}};
    return stack_.create_capsule_from(json::object{
        {"name", name},
        {"source", json::object{{"gitUrl", repo_->url()}, {"ref", "main"}, {"modulePath", ""}}},
        {"outputAllowlist", allow},
        {"variables", json::object{{"seed", canaries_.tag}, {"fail_apply", fail_apply ? "true" : "false"}}},
        {"sensitiveVariables", json::object{{"canary_var", canaries_.var}}},
        {"connections", json::array{env_connection_, file_connection_}},
        // The module prints the canaries from local-exec provisioners.
        {"policy", json::object{{"allowProvisioners", true}}}});
  }

  std::string logs_of(const json::object& run) {
    return stack_.api().get("/api/v1/runs/" + str(run, "id") + "/logs").body;
  }

  Stack stack_;
  Canaries canaries_;
  std::unique_ptr<TestGitRepo> repo_;
  std::string env_connection_;
  std::string file_connection_;
};

TEST_F(CanaryTest, NoPlantedSecretReachesAnySurface) {
  repo_ = std::make_unique<TestGitRepo>(stack_.root() / "repo");
  repo_->commit({{"main.tf", canary_module("1")}});
  env_connection_ = create_connection("canary-env", "env", "CANARY_TOKEN", canaries_.env);
  file_connection_ =
      create_connection("canary-file", "files", "CANARY_CREDENTIALS_FILE", canaries_.file);
  const auto good = create_capsule("canary", false);
  const auto failing = create_capsule("canary-fail", true);

  // plan → apply (generation 1): the provisioner prints every canary into the log.
  auto plan = stack_.plan(good);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  // The reviewer sees that the attribute changes, not the secret it holds.
  auto view = stack_.api().get("/api/v1/runs/" + str(plan, "id") + "/plan");
  ASSERT_EQ(view.status, 200u) << view.body;
  bool marked = false;
  for (const auto& r : view.json.at("resources").as_array())
    if (str(r.as_object(), "address") == "terraform_data.plain_copy")
      for (const auto& a : r.at("attributes").as_array())
        marked |= str(a.as_object(), "path") == "input" &&
                  str(a.as_object(), "after") == "(sensitive value)";
  EXPECT_TRUE(marked) << view.body;
  auto applied = stack_.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << stack_.agent_logs();
  const auto apply_log = logs_of(applied);
  // The lines were printed and redacted; if a value had not reached tofu, these would differ.
  for (const char* line : {"env=[REDACTED]", "file=[REDACTED]", "var=[REDACTED]",
                           "attr=[REDACTED]", "out=[REDACTED]", "dsn=postgres://[REDACTED]@db.internal/app"})
    EXPECT_NE(apply_log.find(line), std::string::npos) << line << " missing from\n" << apply_log;

  // Injected by name only; both mapped Outputs are refused, by name and reason only: the sensitive
  // one (so no Dependency can take it) and the credential-looking one.
  const auto env_names = json::serialize(applied.at("envNames"));
  for (const char* name : {"CANARY_TOKEN", "CANARY_CREDENTIALS_FILE", "TF_VAR_canary_var"})
    EXPECT_NE(env_names.find(name), std::string::npos) << name << " not in " << env_names;
  const auto refused = applied.at("refusedOutputs").as_array();
  ASSERT_EQ(refused.size(), 2u) << json::serialize(applied);
  EXPECT_EQ(str(refused[0].as_object(), "name"), "secretOut");
  EXPECT_EQ(str(refused[0].as_object(), "reason"), "sensitive in the module");
  EXPECT_EQ(str(refused[1].as_object(), "name"), "leakyDsn");
  auto outputs = stack_.api().get("/api/v1/capsules/" + good + "/outputs");
  const auto& published = outputs.json.at("outputs").as_object();
  EXPECT_EQ(str(published, "publicSeed"), canaries_.tag);
  EXPECT_FALSE(published.contains("secretOut"));
  EXPECT_FALSE(published.contains("leakyDsn"));

  // Generation 2 from a new commit, then a drift check and a rollback plan to generation 1.
  repo_->commit({{"main.tf", canary_module("2")}});
  auto plan2 = stack_.plan(good);
  ASSERT_EQ(str(plan2, "status"), "succeeded") << json::serialize(plan2);
  auto applied2 = stack_.apply(str(plan2, "id"));
  ASSERT_EQ(str(applied2, "status"), "succeeded") << json::serialize(applied2);
  auto versions = stack_.state_versions(good);
  ASSERT_EQ(versions.size(), 2u);

  auto drift = stack_.api().post("/api/v1/capsules/" + good + "/drift-check", json::object{});
  ASSERT_EQ(drift.status, 201u) << drift.body;
  auto drift_run = stack_.wait_run(str(drift.json.as_object(), "id"));
  EXPECT_EQ(str(drift_run, "status"), "succeeded") << json::serialize(drift_run);

  std::string first_version;
  for (const auto& v : versions)
    if (v.at("generation").as_int64() == 1) first_version = str(v.as_object(), "id");
  auto rollback =
      stack_.api().post("/api/v1/state-versions/" + first_version + "/rollback-plan", json::object{});
  ASSERT_EQ(rollback.status, 201u) << rollback.body;
  auto rollback_run = stack_.wait_run(str(rollback.json.as_object(), "id"));
  EXPECT_EQ(str(rollback_run, "status"), "succeeded") << json::serialize(rollback_run);

  // A failing apply: the provisioner writes the secrets to stderr and exits 3, so they land in
  // tofu's diagnostics and the Run's failure message.
  auto fail_plan = stack_.plan(failing);
  ASSERT_EQ(str(fail_plan, "status"), "succeeded") << json::serialize(fail_plan);
  auto failed = stack_.apply(str(fail_plan, "id"));
  ASSERT_EQ(str(failed, "status"), "failed") << json::serialize(failed);
  EXPECT_EQ(failure_code(failed), "apply_failed");
  const auto message = str(failed.at("failure").as_object(), "message");
  EXPECT_NE(message.find("token=[REDACTED]"), std::string::npos) << message;

  // Revoked: later Runs are refused, the past Runs stay.
  auto revoked = stack_.api().post("/api/v1/connections/" + env_connection_ + "/revoke", json::object{});
  EXPECT_EQ(revoked.status, 200u) << revoked.body;
  auto refused_plan = stack_.api().post("/api/v1/capsules/" + good + "/plan", json::object{});
  EXPECT_EQ(refused_plan.status, 409u) << refused_plan.body;
  EXPECT_NE(refused_plan.body.find("connection_revoked"), std::string::npos) << refused_plan.body;

  stack_.stop_agents();
  const auto surface = stack_.public_surface({good, failing}, {env_connection_, file_connection_});
  const auto agent_log = stack_.agent_logs();
  const auto control_log = stack_.control_log();
  for (const auto& [what, canary] : canaries_.all()) {
    SCOPED_TRACE(what);
    EXPECT_EQ(surface.find(canary), std::string::npos) << what << " found in a public API response";
    EXPECT_EQ(agent_log.find(canary), std::string::npos) << what << " found in the agent's log";
    EXPECT_EQ(control_log.find(canary), std::string::npos) << what << " found in the control log";
    for (const auto& hit : files_containing(stack_.data_dir(), canary))
      ADD_FAILURE() << what << " found in control plane file " << hit;
    for (const auto& hit : files_containing(stack_.root() / "agent-0", canary))
      ADD_FAILURE() << what << " found in agent file " << hit;
  }
}

}  // namespace
}  // namespace takosumi::testing
