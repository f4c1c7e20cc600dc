// An agent's credential over its life: an operator revokes an agent in the middle of a Run (the
// Run goes to another agent under the lease rules, is applied once, and the revoked agent exits
// with 3); pool tokens rotate (an agent registered with a revoked pool token keeps working, also
// after a restart, while new registrations with it fail); the agent credential is rotated through
// the heartbeat and kept owner-only in stateDir.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <thread>

#include "tests/support/fifo_gate.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

json::object agent_named(const Stack& stack, const std::string& name) {
  auto r = stack.api().get("/api/v1/agents");
  EXPECT_EQ(r.status, 200u) << r.body;
  if (!r.json.is_object()) return {};
  for (const auto& a : r.json.at("agents").as_array())
    if (str(a.as_object(), "name") == name) return a.as_object();
  return {};
}

TEST(AgentLifecycle, ARevokedAgentsRunGoesToAnotherAgentOnceAndTheRevokedAgentExitsThree) {
  StackOptions options;
  options.agents = 1;
  Stack stack(options);
  // The plan reads a FIFO: it blocks in `tofu plan` until the test writes, so the Run is surely
  // in progress when the agent is revoked.
  const FifoGate gate(stack.real_world() / "gate");
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", gate.module(
      "resource \"terraform_data\" \"x\" { input = data.local_file.gate.content }\n")}});
  const auto capsule = stack.create_capsule(repo.url(), {}, {});
  auto queued = stack.api().post("/api/v1/capsules/" + capsule + "/plan", json::object{});
  ASSERT_EQ(queued.status, 201u) << queued.body;
  const std::string plan_id = str(queued.json.as_object(), "id");
  ASSERT_TRUE(eventually([&] {
    return stack.api().get("/api/v1/runs/" + plan_id + "/logs").body.find("data.local_file.gate: Reading") != std::string::npos;
  }, 120s)) << stack.agent_logs();

  const auto first = agent_named(stack, "agent-0");
  ASSERT_EQ(str(first, "state"), "online") << json::serialize(first);
  auto revoked = stack.api().post("/api/v1/agents/" + str(first, "id") + "/revoke", json::object{});
  ASSERT_EQ(revoked.status, 200u) << revoked.body;
  EXPECT_EQ(str(revoked.json.as_object(), "state"), "revoked");
  // Its tofu may still wait at the gate (or be stopped already): let it through, whatever it does
  // now is refused.
  gate.open(5s);
  EXPECT_EQ(stack.wait_agent_exit(0, 120s), 3) << stack.agent_log(0);
  const auto log0 = stack.agent_log(0);
  EXPECT_NE(log0.find("agent_revoked"), std::string::npos) << log0;
  EXPECT_NE(log0.find("reset-keys"), std::string::npos) << log0;

  // The lease ended with the revocation: another agent takes the Run as its next attempt.
  stack.start_agent(1);
  ASSERT_TRUE(eventually([&] {
    auto run = stack.api().get("/api/v1/runs/" + plan_id);
    return run.json.is_object() && run.json.as_object().at("attempt").as_int64() == 2;
  }, 60s)) << stack.agent_logs();
  ASSERT_TRUE(gate.open(120s)) << stack.agent_logs();
  auto plan = stack.wait_run(plan_id);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack.agent_logs();
  EXPECT_EQ(plan.at("attempt").as_int64(), 2) << json::serialize(plan);
  auto applied = stack.apply(plan_id);
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  EXPECT_EQ(stack.state_versions(capsule).size(), 1u);

  // The revoked agent stays out: a restart is refused with the same code and exit status.
  stack.start_agent(0);
  EXPECT_EQ(stack.wait_agent_exit(0, 60s), 3) << stack.agent_log(0);
  EXPECT_EQ(str(agent_named(stack, "agent-0"), "state"), "revoked");
  EXPECT_EQ(str(agent_named(stack, "agent-1"), "state"), "online");
}

TEST(AgentLifecycle, PoolTokensRotateWithoutStrandingRegisteredAgents) {
  StackOptions options;
  options.agents = 0;
  Stack stack(options);
  auto made = stack.api().post("/api/v1/pool-tokens", json::object{{"name", "eu-pool 2026-12"}});
  ASSERT_EQ(made.status, 201u) << made.body;
  const std::string token = str(made.json.as_object(), "token");
  const std::string token_id = str(made.json.as_object(), "id");
  ASSERT_EQ(token.rfind("pool_", 0), 0u) << token;
  // Shown once: the list has no secret.
  auto listed = stack.api().get("/api/v1/pool-tokens");
  ASSERT_EQ(listed.status, 200u) << listed.body;
  EXPECT_EQ(listed.body.find(token), std::string::npos);
  EXPECT_NE(listed.body.find(token_id), std::string::npos);
  EXPECT_TRUE(files_containing(stack.data_dir(), token).empty());

  stack.set_agent_pool_token(0, token);
  stack.start_agent(0);
  ASSERT_TRUE(eventually([&] { return stack.agent_log(0).find("registered with") != std::string::npos; }, 60s))
      << stack.agent_log(0);
  EXPECT_EQ(str(agent_named(stack, "agent-0"), "poolTokenId"), token_id);

  auto revoked = stack.api().post("/api/v1/pool-tokens/" + token_id + "/revoke", json::object{});
  ASSERT_EQ(revoked.status, 200u) << revoked.body;
  EXPECT_TRUE(revoked.json.as_object().at("revokedAt").is_string());

  // A new registration with the revoked pool token fails.
  stack.set_agent_pool_token(1, token);
  stack.start_agent(1);
  EXPECT_EQ(stack.wait_agent_exit(1, 60s), 1) << stack.agent_log(1);
  EXPECT_NE(stack.agent_log(1).find("unknown pool token"), std::string::npos) << stack.agent_log(1);

  // The registered agent keeps working, also after a restart (its kept credential registers it).
  stack.stop_agents();
  stack.start_agent(0);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", R"(resource "terraform_data" "x" { input = "a" })"}});
  auto run = stack.plan(stack.create_capsule(repo.url(), {}, {}));
  EXPECT_EQ(str(run, "status"), "succeeded") << json::serialize(run) << stack.agent_log(0);
}

TEST(AgentLifecycle, TheAgentCredentialRotatesThroughTheHeartbeatAndStaysOwnerOnly) {
  StackOptions options;
  options.agents = 1;
  options.extra_control_yaml = "agentCredentialTtlSeconds: 4\n";
  Stack stack(options);
  const auto kept = stack.agent_dir(0) / "state/agent-credential";
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(kept); }, 60s)) << stack.agent_logs();
  const std::string before = read_text(kept);
  ASSERT_TRUE(eventually([&] { return stack.agent_log(0).find("agent credential rotated") != std::string::npos; }, 60s))
      << stack.agent_log(0);
  ASSERT_TRUE(eventually([&] { return read_text(kept) != before; }, 30s));
  struct stat st{};
  ASSERT_EQ(::stat(kept.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_text(stack.agent_dir(0) / "agent.yaml").find(read_text(kept).substr(0, 20)),
            std::string::npos);

  // Past several lifetimes of the first credential (4 s; each rotation replaces one that is at
  // least half spent), the agent still works.
  const auto rotations = [&] {
    const std::string log = stack.agent_log(0);
    std::size_t n = 0;
    for (auto at = log.find("agent credential rotated"); at != std::string::npos;
         at = log.find("agent credential rotated", at + 1))
      ++n;
    return n;
  };
  ASSERT_TRUE(eventually([&] { return rotations() >= 4; }, 120s)) << stack.agent_log(0);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", R"(resource "terraform_data" "x" { input = "a" })"}});
  auto run = stack.plan(stack.create_capsule(repo.url(), {}, {}));
  EXPECT_EQ(str(run, "status"), "succeeded") << json::serialize(run) << stack.agent_log(0);
  EXPECT_EQ(stack.agent_log(0).find("agent_credential_expired"), std::string::npos)
      << stack.agent_log(0);
}

}  // namespace
}  // namespace takosumi::testing
