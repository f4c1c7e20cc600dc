// Three control-plane replicas on one PostgreSQL store, three agents spread over them (each lists
// all three, starting at its own). The replica an applying agent talks to is killed mid-apply:
// the agent moves to another replica for its heartbeats, announcements and report, so every Run
// completes once — none applied twice, no StateVersion lost or recorded twice — and the stored
// state is what the applies built (a plan afterwards finds nothing to change).
#include <gtest/gtest.h>

#include "tests/fault/fault_support.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

// The index of the agent (agent-<i>) the Run was last claimed by, -1 when not found.
int claiming_agent(Stack& stack, const std::string& run_id) {
  auto claimed = run_events(stack, "run.claimed", run_id);
  if (claimed.empty()) return -1;
  const auto& detail = claimed.back().at("detail").as_object();
  const std::string agent_id = str(detail, "agentId");
  auto agents = stack.api().get("/api/v1/agents");
  for (const auto& a : agents.json.at("agents").as_array()) {
    const auto& o = a.as_object();
    if (str(o, "id") == agent_id && str(o, "name").starts_with("agent-"))
      return std::stoi(str(o, "name").substr(6));
  }
  return -1;
}

TEST(Replicas, KillingTheReplicaOfAnApplyingAgentLosesAndRepeatsNothing) {
  Stack stack(StackOptions{.agents = 3, .replicas = 3});
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", slow_chain_module(3, "3s")}});
  std::vector<StartedApply> applies;
  for (const char* name : {"one", "two", "three"}) {
    applies.push_back(plan_and_start_apply(stack, repo.url(), name));
    ASSERT_FALSE(applies.back().run_id.empty());
  }
  // The first apply is under way (its first file exists); kill the replica its agent talks to.
  const auto first_dir = stack.real_world() / "one";
  ASSERT_TRUE(eventually([&] { return !files_in(first_dir).empty(); }, std::chrono::seconds(120)))
      << stack.agent_logs();
  const int agent = claiming_agent(stack, applies[0].run_id);
  ASSERT_GE(agent, 0);
  ASSERT_LT(files_in(first_dir).size(), 3u) << "the apply ended before the replica was killed";
  const int killed = agent % 3;
  stack.use_replica_for_api((killed + 1) % 3);
  stack.kill_replica(killed);

  for (const auto& [capsule, run_id] : applies) {
    auto run = stack.wait_run(run_id);
    EXPECT_EQ(str(run, "status"), "succeeded") << json::serialize(run) << stack.agent_logs();
    EXPECT_EQ(run.at("attempt").as_int64(), 1) << "the apply was handed out again";
    auto versions = stack.state_versions(capsule);
    ASSERT_EQ(versions.size(), 1u) << json::serialize(versions);
    EXPECT_EQ(versions[0].at("generation").as_int64(), 1);
    EXPECT_FALSE(versions[0].at("partial").as_bool());
    EXPECT_EQ(run_events(stack, "state_version.created", run_id).size(), 1u);
    EXPECT_EQ(run_events(stack, "run.finished", run_id).size(), 1u);
  }
  for (const char* name : {"one", "two", "three"})
    EXPECT_EQ(files_in(stack.real_world() / name).size(), 3u) << name;
  const std::string log = stack.agent_log(agent);
  EXPECT_NE(log.find("from now on"), std::string::npos) << "agent-" << agent << " never moved:\n"
                                                        << log;

  // What was stored is what exists: planning again finds nothing to do, and the killed replica,
  // started again, serves the same history.
  for (const auto& [capsule, run_id] : applies) {
    auto plan = stack.plan(capsule);
    EXPECT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
    EXPECT_FALSE(plan.at("hasChanges").as_bool()) << json::serialize(plan);
  }
  if (killed == 0)
    stack.start_control();
  else
    stack.start_replica(killed);
  stack.use_replica_for_api(killed);
  for (const auto& [capsule, run_id] : applies)
    EXPECT_EQ(stack.state_versions(capsule).size(), 1u);
}

}  // namespace
}  // namespace takosumi::testing
