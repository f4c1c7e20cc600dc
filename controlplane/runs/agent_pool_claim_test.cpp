// Claims across agent pools: an agent is handed only Runs of Capsules in its pool whose required
// labels it has (its own or its pool's), and only while the Capsule's Workspace may use that pool;
// Runs it cannot take never hide one it can, however many wait ahead; a pool's load counts what
// waits for it.
#include "controlplane/testing/run_queue_fixture.hpp"

namespace takosumi::controlplane {
namespace {

class AgentPoolClaimTest : public RunQueueTest {
 protected:
  Agent pool_agent(const std::string& name, const std::string& pool,
                   std::vector<std::string> labels = {}) {
    auto cred = agents_.register_agent({name, "0.1.0", std::move(labels), 2, "box-" + name,
                                        "sign-" + name},
                                       RegistrationContext{"ptk_" + pool, "", pool});
    EXPECT_TRUE(cred) << cred.error().to_string();
    return *agents_.authenticate(cred->agent_token);
  }

  Capsule capsule_in(const std::string& name, const std::string& pool,
                     std::vector<std::string> labels = {}) {
    Capsule c = capsule(name);
    EXPECT_TRUE(catalog_.set_agent_requirements(c.id, {pool, std::move(labels)}));
    return *catalog_.get_capsule(c.id);
  }

  void make_pool(const std::string& name, std::vector<std::string> labels,
                 std::vector<std::string> workspaces) {
    auto made = pools_.create({.name = name, .labels = std::move(labels),
                               .workspaces = std::move(workspaces), .created_by = "admin"});
    ASSERT_TRUE(made) << made.error().to_string();
  }
};

TEST_F(AgentPoolClaimTest, AnAgentTakesOnlyRunsOfItsPoolWithLabelsItHas) {
  ASSERT_NO_FATAL_FAILURE(make_pool("gpu", {"gpu"}, {workspace_id_}));
  const Agent gpu_eu = pool_agent("gpu-eu", "gpu", {"region=eu"});
  EXPECT_EQ(gpu_eu.pool, "gpu");
  EXPECT_EQ(gpu_eu.labels, (std::vector<std::string>{"region=eu", "gpu"})) << "its own and its pool's";
  const Agent gpu_us = pool_agent("gpu-us", "gpu", {"region=us", "region=eu,x"});
  const Run default_run = plan(capsule("web"));
  const Run eu_run = plan(capsule_in("trainer", "gpu", {"gpu", "region=eu"}));

  EXPECT_TRUE(claim(gpu_us, 2).empty())
      << "in the pool, without region=eu (a label holding a comma is not a list of labels)";
  auto eu = claim(gpu_eu, 2);
  ASSERT_EQ(eu.size(), 1u) << "never the default pool's Run";
  EXPECT_EQ(eu[0].claimed.run.id, eu_run.id);
  auto rest = claim(agent_a_, 2);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].claimed.run.id, default_run.id);
}

TEST_F(AgentPoolClaimTest, RunsNoAgentCanTakeHideNoneBehindThem) {
  std::vector<Capsule> unreachable;
  for (int i = 0; i < 70; ++i) {
    unreachable.push_back(capsule_in("needs-ssd-" + std::to_string(i), "default", {"ssd"}));
    plan(unreachable.back());
  }
  const Run reachable = plan(capsule("web"));
  auto jobs = claim(agent_a_, 2);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].claimed.run.id, reachable.id);
  auto load = pools_.load("default");
  ASSERT_TRUE(load);
  EXPECT_EQ(load->queued, 70);
  EXPECT_EQ(load->agents, 2);
  EXPECT_EQ(load->capacity, 4);
}

TEST_F(AgentPoolClaimTest, RunsOfAWorkspaceTakenOffThePoolWaitUntilItIsNamedAgain) {
  ASSERT_NO_FATAL_FAILURE(make_pool("secure", {}, {workspace_id_}));
  const Agent secure = pool_agent("secure-1", "secure");
  const Run waiting = plan(capsule_in("vault", "secure"));
  EXPECT_FALSE(pools_.set_workspaces("secure", {"ws_someone_else"}))
      << "a Workspace that does not exist is refused";
  const std::string other = catalog_.create_workspace("other")->id;
  ASSERT_TRUE(pools_.set_workspaces("secure", {other}));
  EXPECT_FALSE(*pools_.usable_by("secure", workspace_id_));
  EXPECT_TRUE(claim(secure, 2).empty()) << "the Capsule named the pool before; it may no more";
  EXPECT_EQ(pools_.load("secure")->queued, 0) << "not counted as work for the pool's agents";
  ASSERT_TRUE(pools_.set_workspaces("secure", {"*"}));
  auto jobs = claim(secure, 2);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].claimed.run.id, waiting.id);
  EXPECT_FALSE(pools_.set_workspaces("default", {workspace_id_})) << "default is everyone's";
}

TEST_F(AgentPoolClaimTest, ReRegisteringKeepsThePoolUnlessAnotherPoolsTokenMovesIt) {
  ASSERT_NO_FATAL_FAILURE(make_pool("gpu", {}, {"*"}));
  ASSERT_NO_FATAL_FAILURE(make_pool("cpu", {}, {"*"}));
  pool_agent("gpu-1", "gpu");
  auto again = agents_.register_agent({"gpu-1", "0.2.0", {}, 2, "box-gpu-1", "sign-gpu-1"},
                                      RegistrationContext{});
  ASSERT_TRUE(again);
  EXPECT_EQ(agents_.authenticate(again->agent_token)->pool, "gpu") << "its own credential";
  EXPECT_EQ(agents_.get(again->agent_id)->pool, "gpu");
  EXPECT_EQ(pool_agent("gpu-1", "cpu").pool, "cpu") << "another pool's token";
}

}  // namespace
}  // namespace takosumi::controlplane
