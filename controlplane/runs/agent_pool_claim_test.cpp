// Claims across agent pools: an agent is handed only Runs of Capsules in its pool whose required
// labels it has (its own or its pool's); Runs it cannot take never hide one it can, however many
// wait ahead; a pool's load counts what waits for it.
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
};

TEST_F(AgentPoolClaimTest, AnAgentTakesOnlyRunsOfItsPoolWithLabelsItHas) {
  ASSERT_TRUE(pools_.create("gpu", {"gpu"}, "admin"));
  const Agent gpu_eu = pool_agent("gpu-eu", "gpu", {"region=eu"});
  EXPECT_EQ(gpu_eu.pool, "gpu");
  const Agent gpu_us = pool_agent("gpu-us", "gpu", {"region=us"});
  const Run default_run = plan(capsule("web"));
  const Run eu_run = plan(capsule_in("trainer", "gpu", {"gpu", "region=eu"}));

  EXPECT_TRUE(claim(gpu_us, 2).empty()) << "in the pool, without region=eu";
  auto eu = claim(gpu_eu, 2);
  ASSERT_EQ(eu.size(), 1u) << "never the default pool's Run";
  EXPECT_EQ(eu[0].claimed.run.id, eu_run.id);
  auto rest = claim(agent_a_, 2);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].claimed.run.id, default_run.id);
}

TEST_F(AgentPoolClaimTest, RunsNoAgentCanTakeHideNoneBehindThem) {
  // More than one page of Runs (run_claims.cpp reads 64 at a time) that agent_a lacks a label for.
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

TEST_F(AgentPoolClaimTest, ReRegisteringWithItsOwnCredentialKeepsThePool) {
  ASSERT_TRUE(pools_.create("gpu", {}, "admin"));
  pool_agent("gpu-1", "gpu");
  auto again = agents_.register_agent({"gpu-1", "0.2.0", {}, 2, "box-gpu-1", "sign-gpu-1"},
                                      RegistrationContext{});
  ASSERT_TRUE(again);
  EXPECT_EQ(agents_.authenticate(again->agent_token)->pool, "gpu");
  EXPECT_EQ(agents_.get(again->agent_id)->pool, "gpu");
}

}  // namespace
}  // namespace takosumi::controlplane
