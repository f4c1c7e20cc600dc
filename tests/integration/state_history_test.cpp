// StateVersion history through the real control plane, agent and OpenTofu: rollback is an ordinary
// plan and apply that appends, drift checks only report, destroy appends an empty version, and
// data-loss replacements need explicit acceptance.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/http_client.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

// One data-bearing file whose content is the version, and an output computed at every refresh.
std::string versioned_module(const std::string& version) {
  return R"(variable "out_dir" { type = string }
resource "local_file" "data" {
  filename = "${var.out_dir}/data.txt"
  content  = ")" + version + R"("
}
resource "terraform_data" "marker" { input = ")" + version + R"(" }
output "version" { value = terraform_data.marker.output }
output "checked_at" { value = timestamp() }
)";
}

class StateHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(out_dir());
    commits_.push_back(repo_.commit({{"main.tf", versioned_module("v1")}}));
    capsule_ = stack_.create_capsule(repo_.url(), json::object{{"out_dir", out_dir().string()}},
                                     json::object{{"version", json::object{{"from", "version"}}}});
  }
  std::filesystem::path out_dir() const { return stack_.root() / "real-world"; }
  std::string data() const { return read_text(out_dir() / "data.txt"); }

  // Plans, expects success, applies accepting data loss, expects success; returns the apply Run.
  json::object plan_and_apply(const json::object& plan) {
    EXPECT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
    auto started = stack_.post_apply(str(plan, "id"), true);
    EXPECT_EQ(started.status, 201u) << started.body;
    if (!started.json.is_object()) return {};
    auto run = stack_.wait_run(str(started.json.as_object(), "id"));
    EXPECT_EQ(str(run, "status"), "succeeded") << json::serialize(run) << stack_.agent_logs();
    return run;
  }
  json::object rollback_plan(const std::string& state_version_id) {
    auto r = stack_.api().post("/api/v1/state-versions/" + state_version_id + "/rollback-plan",
                               json::object{});
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.json.is_object() ? stack_.wait_run(str(r.json.as_object(), "id")) : json::object{};
  }
  json::object drift_check() {
    auto r = stack_.api().post("/api/v1/capsules/" + capsule_ + "/drift-check", json::object{});
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.json.is_object() ? stack_.wait_run(str(r.json.as_object(), "id")) : json::object{};
  }
  // generation → (id, ciphertext digest)
  std::map<std::int64_t, std::pair<std::string, std::string>> versions() {
    std::map<std::int64_t, std::pair<std::string, std::string>> out;
    for (const auto& v : stack_.state_versions(capsule_)) {
      const auto& o = v.as_object();
      out[o.at("generation").as_int64()] = {str(o, "id"), str(o, "ciphertextSha256")};
    }
    return out;
  }

  Stack stack_;
  TestGitRepo repo_{stack_.root() / "repo"};
  std::vector<std::string> commits_;
  std::string capsule_;
};

TEST_F(StateHistoryTest, RollbackAppendsAndCanItselfBeRolledBack) {
  plan_and_apply(stack_.plan(capsule_));
  commits_.push_back(repo_.commit({{"main.tf", versioned_module("v2")}}));
  plan_and_apply(stack_.plan(capsule_));
  ASSERT_EQ(data(), "v2");
  auto before = versions();
  ASSERT_EQ(before.size(), 2u);

  // Selecting v1 changes nothing until its plan is applied.
  auto rollback = rollback_plan(before[1].first);
  EXPECT_EQ(data(), "v2");
  EXPECT_EQ(versions().size(), 2u);
  EXPECT_EQ(str(rollback, "sourceCommit"), commits_[0]);
  auto applied = plan_and_apply(rollback);
  EXPECT_EQ(data(), "v1") << "v3 must match v1's configuration";
  auto after = versions();
  ASSERT_EQ(after.size(), 3u);
  auto v3 = stack_.api().get("/api/v1/state-versions/" + after[3].first);
  ASSERT_EQ(v3.status, 200u) << v3.body;
  EXPECT_EQ(str(v3.json.as_object(), "restoredFrom"), before[1].first);

  // Rolling back the rollback: to v2, giving v4.
  plan_and_apply(rollback_plan(before[2].first));
  EXPECT_EQ(data(), "v2");
  auto last = versions();
  ASSERT_EQ(last.size(), 4u);
  for (std::int64_t g = 1; g <= 3; ++g)
    EXPECT_EQ(last[g], g <= 2 ? before[g] : after[g]) << "generation " << g << " was rewritten";
  auto outputs = stack_.api().get("/api/v1/capsules/" + capsule_ + "/outputs");
  EXPECT_EQ(str(outputs.json.at("outputs").as_object(), "version"), "v2");
}

// rotate-keys on a stopped control plane: a StateVersion sealed to the old storage key still opens
// (a rollback to it applies), new ones are sealed to the new key, and agents take manifests signed
// by the new signing key once they pin its keys/signing.pub (the stack's agents pin that file).
TEST_F(StateHistoryTest, RotatedKeysKeepEveryStateVersionOpenAndAgentsFollowTheNewSigningKey) {
  plan_and_apply(stack_.plan(capsule_));
  const auto keys = stack_.data_dir() / "keys";
  const std::string old_storage = read_text(keys / "storage.pub");
  const std::string old_signing = read_text(keys / "signing.pub");
  const std::filesystem::path bin = test_paths::binary_dir;
  auto rotate = [&](const std::string& key, const std::string& log) {
    ChildProcess command({(bin / "controlplane/takosumi-control").string(), "rotate-keys",
                          "--config", (stack_.root() / "control.yaml").string(), "--key", key},
                         {}, stack_.root() / log);
    const int rc = command.wait(std::chrono::seconds(60));
    return std::pair{rc, read_text(command.log_file())};
  };
  // Never beside the control plane that serves with these keys.
  const auto [live_rc, live_said] = rotate("storage", "rotate-live.log");
  EXPECT_EQ(live_rc, 1) << live_said;
  EXPECT_NE(live_said.find("is serving"), std::string::npos) << live_said;
  EXPECT_EQ(read_text(keys / "storage.pub"), old_storage);
  stack_.stop_agents();
  stack_.stop_control(false);
  for (const std::string key : {"storage", "signing"}) {
    const auto [rc, said] = rotate(key, "rotate-" + key + ".log");
    ASSERT_EQ(rc, 0) << said;
    EXPECT_NE(said.find(key + " key rotated"), std::string::npos) << said;
  }
  EXPECT_NE(read_text(keys / "storage.pub"), old_storage);
  EXPECT_NE(read_text(keys / "signing.pub"), old_signing);
  std::vector<std::filesystem::path> retired;
  for (const auto& e : std::filesystem::directory_iterator(keys / "retired")) retired.push_back(e.path());
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_EQ(std::filesystem::status(retired[0]).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  stack_.start_control();
  stack_.start_agent(0);

  const std::string v1 = versions().at(1).first;
  commits_.push_back(repo_.commit({{"main.tf", versioned_module("v2")}}));
  plan_and_apply(stack_.plan(capsule_));
  EXPECT_EQ(data(), "v2");
  plan_and_apply(rollback_plan(v1));  // v1's data key was sealed to the retired storage key
  EXPECT_EQ(data(), "v1");
  EXPECT_EQ(versions().size(), 3u);
  const auto checked = drift_check();  // opens the newest StateVersion, sealed to the new key
  EXPECT_EQ(str(checked, "status"), "succeeded") << json::serialize(checked);
}

// A Capsule moved to another branch (PATCH source.ref) plans and applies from there on top of the
// state it has: its StateVersions go on, none is lost or started again.
TEST_F(StateHistoryTest, ACapsuleMovedToAnotherBranchKeepsItsStateVersions) {
  plan_and_apply(stack_.plan(capsule_));
  EXPECT_EQ(data(), "v1");
  const std::string next = repo_.commit({{"main.tf", versioned_module("v2")}}, "refs/heads/next");
  auto moved = stack_.api().patch("/api/v1/capsules/" + capsule_,
                                  json::object{{"source", json::object{{"ref", "next"}}}});
  ASSERT_EQ(moved.status, 200u) << moved.body;
  EXPECT_EQ(moved.json.at("specRevision"), 2);
  const auto plan = stack_.plan(capsule_);
  EXPECT_EQ(str(plan, "sourceCommit"), next);
  EXPECT_EQ(plan.at("specRevision"), 2);
  plan_and_apply(plan);
  EXPECT_EQ(data(), "v2");
  const auto history = versions();
  ASSERT_EQ(history.size(), 2u);
  EXPECT_TRUE(history.contains(1) && history.contains(2));
  auto outputs = stack_.api().get("/api/v1/capsules/" + capsule_ + "/outputs");
  EXPECT_EQ(outputs.json.at("outputs").at("version"), "v2") << outputs.body;
}

TEST_F(StateHistoryTest, RollbackToACommitThatNoLongerExistsFailsAndAddsNothing) {
  plan_and_apply(stack_.plan(capsule_));
  commits_.push_back(repo_.commit({{"main.tf", versioned_module("v2")}}));
  plan_and_apply(stack_.plan(capsule_));
  auto before = versions();
  // History rewritten: main now starts from a new root, and the old commits are collected.
  repo_.set_ref("refs/heads/main", repo_.dangling_commit({{"main.tf", versioned_module("v9")}}));
  for (const auto& c : commits_)
    std::filesystem::remove(stack_.root() / "repo/.git/objects" / c.substr(0, 2) / c.substr(2));

  auto rollback = rollback_plan(before[1].first);
  EXPECT_EQ(str(rollback, "status"), "failed");
  EXPECT_EQ(failure_code(rollback), "source_commit_missing") << json::serialize(rollback);
  EXPECT_NE(json::serialize(rollback).find(commits_[0]), std::string::npos)
      << "the failure must name the missing commit";
  EXPECT_EQ(versions(), before);
}

TEST_F(StateHistoryTest, ReplacingADataBearingResourceNeedsExplicitAcceptance) {
  plan_and_apply(stack_.plan(capsule_));
  repo_.commit({{"main.tf", versioned_module("v2")}});
  auto plan = stack_.plan(capsule_);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  const auto& marks = plan.at("dataLoss").as_array();
  ASSERT_EQ(marks.size(), 1u) << json::serialize(plan);
  EXPECT_EQ(str(marks[0].as_object(), "address"), "local_file.data");
  EXPECT_EQ(str(marks[0].as_object(), "action"), "replace");

  auto refused = stack_.post_apply(str(plan, "id"), false);
  EXPECT_EQ(refused.status, 409u) << refused.body;
  EXPECT_NE(refused.body.find("local_file.data"), std::string::npos) << refused.body;
  EXPECT_EQ(versions().size(), 1u);
  EXPECT_EQ(data(), "v1");

  plan_and_apply(plan);
  EXPECT_EQ(data(), "v2");
  EXPECT_EQ(versions().size(), 2u);
}

TEST_F(StateHistoryTest, DriftCheckReportsOnlyAndNeverChangesState) {
  plan_and_apply(stack_.plan(capsule_));
  auto before = versions();

  // Clean: the output computed by timestamp() differs at every refresh, which is not drift.
  auto clean = drift_check();
  EXPECT_EQ(str(clean, "status"), "succeeded") << json::serialize(clean) << stack_.agent_logs();
  EXPECT_EQ(str(clean.at("drift").as_object(), "status"), "no_drift") << json::serialize(clean);

  std::ofstream(out_dir() / "data.txt", std::ios::trunc) << "edited by hand";
  auto drifted = drift_check();
  ASSERT_EQ(str(drifted, "status"), "succeeded") << json::serialize(drifted);
  const auto& report = drifted.at("drift").as_object();
  EXPECT_EQ(str(report, "status"), "drift");
  ASSERT_EQ(report.at("resources").as_array().size(), 1u) << json::serialize(report);
  EXPECT_EQ(str(report.at("resources").as_array()[0].as_object(), "address"), "local_file.data");
  EXPECT_EQ(json::serialize(drifted).find("edited by hand"), std::string::npos);

  // Read-only: nothing fixed, nothing stored, and the Run cannot be applied.
  EXPECT_EQ(data(), "edited by hand");
  EXPECT_EQ(versions(), before);
  EXPECT_EQ(stack_.post_apply(str(drifted, "id"), true).status, 409u);
}

TEST_F(StateHistoryTest, DestroyAppendsAnEmptyVersionAndTheNextPlanStartsFromEmpty) {
  plan_and_apply(stack_.plan(capsule_));
  auto destroy = stack_.api().request("DELETE", "/api/v1/capsules/" + capsule_);
  ASSERT_EQ(destroy.status, 201u) << destroy.body;
  auto destroy_plan = stack_.wait_run(str(destroy.json.as_object(), "id"));
  EXPECT_EQ(str(destroy_plan, "type"), "destroy_plan");
  EXPECT_TRUE(std::filesystem::exists(out_dir() / "data.txt")) << "destroy waited for no apply";
  plan_and_apply(destroy_plan);
  EXPECT_FALSE(std::filesystem::exists(out_dir() / "data.txt"));
  EXPECT_EQ(versions().size(), 2u);
  auto history = stack_.api().get("/api/v1/capsules/" + capsule_ + "/state-versions");
  EXPECT_EQ(history.status, 200u) << "the history must stay readable";

  auto next = stack_.plan(capsule_);
  ASSERT_EQ(str(next, "status"), "succeeded") << json::serialize(next);
  EXPECT_EQ(next.at("changeSummary").at("add").as_int64(), 2) << json::serialize(next);

  // Rolling back to the destroyed generation destroys again: the owner's decision, as DELETE is.
  plan_and_apply(next);
  auto token = stack_.api().post(
      "/api/v1/tokens", json::object{{"name", "deployer"},
                                     {"roles", json::object{{stack_.workspace_id(), "operator"}}}});
  ASSERT_EQ(token.status, 201u) << token.body;
  const HttpClient operator_client(stack_.port(), str(token.json.as_object(), "secret"));
  const auto rollback_url = [&](std::int64_t generation) {
    return "/api/v1/state-versions/" + versions().at(generation).first + "/rollback-plan";
  };
  auto refused = operator_client.post(rollback_url(2), json::object{});
  EXPECT_EQ(refused.status, 403u) << refused.body;
  EXPECT_NE(refused.body.find("the owner role"), std::string::npos) << refused.body;
  auto allowed = operator_client.post(rollback_url(1), json::object{});
  ASSERT_EQ(allowed.status, 201u) << allowed.body;
  EXPECT_EQ(str(stack_.wait_run(str(allowed.json.as_object(), "id")), "type"), "plan");
}

}  // namespace
}  // namespace takosumi::testing
