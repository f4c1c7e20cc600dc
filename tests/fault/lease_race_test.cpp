// Two agents race on an expired lease: agent-0 claims the apply and freezes (SIGSTOP) before it
// starts applying; its lease runs out and agent-1 takes the Run. When agent-0 wakes up, the control
// plane refuses it (fencing): it never applies, posts nothing, keeps its spool for the operator and
// reports lease_lost. Exactly one StateVersion lineage results.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <thread>

#include "tests/fault/fault_support.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

std::string run_command(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

TEST(LeaseRace, TheAgentThatLostTheLeaseNeverAppliesAndReportsLeaseLost) {
  StackOptions options;
  options.lease_seconds = 6;
  Stack stack(options);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", slow_chain_module(2, "1s")}});
  const auto out_dir = stack.real_world() / "race";
  const auto [capsule, run_id] = plan_and_start_apply(stack, repo.url(), "race");
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(wait_until_running(stack, run_id));
  const pid_t frozen = stack.agent_pid(0);
  ASSERT_EQ(::kill(frozen, SIGSTOP), 0);
  EXPECT_NE(journaled_phase(stack, 0, run_id), "apply") << "frozen too late for this test";

  // Once the lease (6 s) has expired, a second agent takes the Run over: its claims look again
  // every second, so it is started now and waits for that itself.
  stack.start_agent(1);
  ASSERT_TRUE(eventually([&] { return !run_events(stack, "run.apply_started", run_id).empty(); },
                         std::chrono::seconds(120)))
      << stack.agent_logs();
  auto run = stack.wait_run(run_id);
  ASSERT_EQ(str(run, "status"), "succeeded") << json::serialize(run) << stack.agent_logs();
  EXPECT_EQ(run.at("attempt").as_int64(), 2);

  ASSERT_EQ(::kill(frozen, SIGCONT), 0);
  ASSERT_TRUE(eventually([&] { return journaled_phase(stack, 0, run_id) == "lease_lost"; },
                         std::chrono::seconds(120)))
      << stack.agent_logs();

  auto versions = stack.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u) << "history forked";
  EXPECT_EQ(versions[0].at("generation").as_int64(), 1);
  EXPECT_EQ(files_in_state(stack.state_plaintext(str(versions[0].as_object(), "ciphertextSha256"))),
            files_in(out_dir));
  auto applies = run_events(stack, "run.apply_started", run_id);
  ASSERT_EQ(applies.size(), 1u) << "the apply started twice";
  EXPECT_EQ(applies[0].at("detail").at("attempt").as_int64(), 2);
  EXPECT_NE(read_text(stack.agent_dir(0) / "agent.log").find("lease_lost"), std::string::npos);

  // The operator's view on agent-0's host.
  const std::string agent = std::string(test_paths::binary_dir) + "/agent/takosumi-agent";
  const std::string config = (stack.agent_dir(0) / "agent.yaml").string();
  auto listing = run_command(agent + " --config " + config + " recover 2>&1");
  EXPECT_NE(listing.find("run " + run_id + " attempt 1: lease_lost"), std::string::npos) << listing;
  stack.stop_agents();
  auto discarded = run_command(agent + " --config " + config + " recover --discard " + run_id + " 2>&1");
  EXPECT_NE(discarded.find("removed"), std::string::npos) << discarded;
  EXPECT_NE(run_command(agent + " --config " + config + " recover 2>&1").find("nothing to recover"),
            std::string::npos);
}

}  // namespace
}  // namespace takosumi::testing
