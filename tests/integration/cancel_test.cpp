// Cancelling a running apply interrupts tofu, keeps the state it persisted, and leaves no process.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

bool tofu_running_under(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const auto cwd = e.path() / "cwd";
    std::error_code ec;
    auto target = std::filesystem::read_symlink(cwd, ec);
    if (!ec && target.string().rfind(dir.string(), 0) == 0) return true;
  }
  return false;
}

TEST(Cancel, CancelDuringApplyInterruptsTofuAndKeepsThePersistedState) {
  Stack stack;
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", slow_apply_module()}});
  auto capsule = stack.create_capsule(repo.url(), {}, {});
  auto plan = stack.plan(capsule);
  ASSERT_EQ(json::value_to<std::string>(plan.at("status")), "succeeded") << json::serialize(plan);
  auto started = stack.api().post(
      "/api/v1/runs/" + json::value_to<std::string>(plan.at("id")) + "/apply", json::object{});
  ASSERT_EQ(started.status, 201u) << started.body;
  const auto run_id = json::value_to<std::string>(started.json.at("id"));

  // Wait until tofu is inside the slow create, as the live log shows.
  ASSERT_TRUE(eventually(
      [&] { return stack.api().get("/api/v1/runs/" + run_id + "/logs").body.find("time_sleep.slow: Creating") != std::string::npos; },
      std::chrono::seconds(120)))
      << stack.agent_logs();
  auto cancel = stack.api().post("/api/v1/runs/" + run_id + "/cancel", json::object{});
  ASSERT_EQ(cancel.status, 200u) << cancel.body;

  auto run = stack.wait_run(run_id, std::chrono::seconds(120));
  EXPECT_EQ(json::value_to<std::string>(run.at("status")), "cancelled") << json::serialize(run);
  // terraform_data.first was created before the interrupt: its state must not be forgotten.
  auto versions = stack.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u) << "the state tofu persisted was not kept";
  EXPECT_TRUE(versions[0].at("partial").as_bool()) << "a cancelled apply's state is partial";
  auto shown = stack.api().get("/api/v1/capsules/" + capsule);
  EXPECT_TRUE(shown.json.at("needsAttention").as_bool()) << shown.body;
  EXPECT_FALSE(tofu_running_under(stack.root())) << "a process of the Run survived it";
}

// A stop that comes the moment the agent was started (systemd stopping a service it just
// restarted; a test's teardown) ends it cleanly, exit 0, never killed half-started. The
// assertion is in Stack::stop_agents. Under load this raced: the agent died of SIGTERM (143).
TEST(AgentStop, AnAgentStoppedTheMomentItStartsExitsCleanly) {
  for (int i = 0; i < 5; ++i) {
    Stack stack;
    stack.stop_agents();
  }
}

}  // namespace
}  // namespace takosumi::testing
