// The control plane goes away in the middle of an apply and comes back after the apply has ended:
// the agent keeps the results (report, state, the tail of the log) and delivers them when it is
// back, exactly once.
#include <gtest/gtest.h>

#include <thread>

#include "tests/fault/fault_support.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/throttled_proxy.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

TEST(ControlOutage, ResultsAndStateArriveExactlyOnceWhenTheControlPlaneIsBack) {
  Stack stack;
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", slow_chain_module(3, "2s")}});
  const auto out_dir = stack.real_world() / "outage";
  const auto [capsule, run_id] = plan_and_start_apply(stack, repo.url(), "outage");
  ASSERT_FALSE(run_id.empty());
  // The first resource exists: the control plane has acknowledged the apply's announcement and
  // tofu is applying (the journal says "apply" already before the announcement).
  ASSERT_TRUE(eventually([&] { return !files_in(out_dir).empty(); }, std::chrono::seconds(120)))
      << stack.agent_logs();
  ASSERT_EQ(journaled_phase(stack, 0, run_id), "apply");

  stack.stop_control(true);
  // The apply finishes with nobody to tell; the agent keeps trying for a while.
  ASSERT_TRUE(eventually([&] { return files_in(out_dir).size() == 3; }, std::chrono::seconds(120)));
  ASSERT_TRUE(eventually([&] { return journaled_phase(stack, 0, run_id) == "deliver"; },
                         std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(journaled_phase(stack, 0, run_id), "deliver") << "delivered with no control plane?";
  stack.start_control();

  auto run = stack.wait_run(run_id);
  EXPECT_EQ(str(run, "status"), "succeeded") << json::serialize(run) << stack.agent_logs();
  auto versions = stack.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_FALSE(versions[0].at("partial").as_bool());
  EXPECT_EQ(files_in_state(stack.state_plaintext(str(versions[0].as_object(), "ciphertextSha256"))),
            files_in(out_dir));
  EXPECT_EQ(run_events(stack, "state_version.created", run_id).size(), 1u);
  EXPECT_EQ(run_events(stack, "run.finished", run_id).size(), 1u);
  // The end of the log was written while the control plane was away; it is not lost.
  auto logs = stack.api().get("/api/v1/runs/" + run_id + "/logs");
  EXPECT_NE(logs.body.find("Apply complete"), std::string::npos) << logs.body;
  EXPECT_TRUE(eventually([&] { return journaled_phase(stack, 0, run_id).empty(); },
                         std::chrono::seconds(30)))
      << "the journal still holds the delivered Run";
  EXPECT_FALSE(fs::exists(stack.agent_dir(0) / "state/spool" / (run_id + "-1")));
}

// A slow uplink: the plan and the state the apply leaves take several leases to upload. The lease
// is renewed all the while, so each Run ends in its first attempt and nothing is run twice.
TEST(SlowUplink, AnUploadLongerThanTheLeaseDoesNotLoseIt) {
  constexpr int kLeaseSeconds = 4;
  constexpr std::uint64_t kBytesPerSecond = 64 * 1024;
  Stack stack(StackOptions{.agents = 0, .lease_seconds = kLeaseSeconds});
  ThrottledProxy proxy(stack.port(), kBytesPerSecond);
  stack.set_agent_control_plane(
      0, "controlPlane:\n  url: http://127.0.0.1:" + std::to_string(proxy.port()) + "\n");
  stack.start_agent(0);
  TestGitRepo repo(stack.root() / "repo");
  // About 300 KB of input: the sealed plan carries it once, the state twice (input and output).
  repo.commit({{"main.tf", "resource \"terraform_data\" \"big\" {\n"
                           "  input = format(\"%0300000d\", 7)\n}\n"}});
  const auto capsule = stack.create_capsule(repo.url(), {}, {});
  auto plan = stack.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack.agent_logs();
  auto applied = stack.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << stack.agent_logs();
  for (const auto* run : {&plan, &applied})
    EXPECT_EQ(run->at("attempt").as_int64(), 1) << json::serialize(*run);
  EXPECT_EQ(stack.state_versions(capsule).size(), 1u);
  // The uploads really were longer than a lease: more bytes than the link carries in one.
  EXPECT_GT(proxy.client_bytes(), 2 * kBytesPerSecond * kLeaseSeconds);
  EXPECT_EQ(stack.agent_logs().find("lease lost"), std::string::npos) << stack.agent_logs();
}

}  // namespace
}  // namespace takosumi::testing
