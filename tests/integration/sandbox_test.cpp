// The per-Run sandbox with the real agent, bubblewrap and OpenTofu: a hostile module (here, a
// local-exec provisioner) cannot read the agent's keys, token, configuration or another Run's
// workspace, cannot write outside its workspace, leaves no process behind, gets no network with
// `network: none`, and is stopped by the wall-clock limit. Without bubblewrap nothing runs.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/probe_module.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(Sandbox, AHostileProvisionerReachesNothingOfTheAgentAndLeavesNothingRunning) {
  Stack stack;
  const fs::path agent = stack.root() / "agent-0";
  const fs::path other_workspace = agent / "work" / "run_other-1" / "state.txt";
  const std::map<std::string, fs::path> secrets{
      {"key", agent / "state" / "keys" / "agent-box.key"},
      {"token", stack.root() / "pool.token"},
      {"config", agent / "agent.yaml"},
      {"other", other_workspace},
      {"control", stack.data_dir() / "keys" / "storage.key"}};
  // The agent creates its keys as it starts.
  for (const auto& [name, path] : secrets) {
    if (name == "other") continue;
    ASSERT_TRUE(eventually([&] { return fs::exists(path); }, std::chrono::seconds(30)))
        << name << " " << path;
  }
  const fs::path outside = stack.root() / "outside.txt";

  std::string script =
      "probe() { if sh -c \"$2\" >/dev/null 2>&1; then echo \"REACHED $1\"; else echo \"BLOCKED $1\"; fi; }\n";
  for (const auto& [name, path] : secrets) script += "probe read-" + name + " 'cat " + path.string() + "'\n";
  script +=
      "probe write-usr 'echo x > /usr/takosumi-probe'\n"
      "probe write-etc 'echo x > /etc/takosumi-probe'\n"
      "probe write-root 'echo x > /takosumi-probe'\n"
      // Under /tmp, as the whole test stack is: the write lands in the Run's private /tmp.
      "echo x > " + outside.string() + " 2>/dev/null\n"
      "echo x > " + (agent / "state" / "planted").string() + " 2>/dev/null\n"
      // Controls: the probe itself works, and what the sandbox does allow is allowed.
      "probe write-workspace 'echo x > ./probe.txt'\n"
      "probe write-real-world 'echo x > " + (stack.real_world() / "probe.txt").string() + "'\n"
      "probe read-system 'cat /etc/passwd'\n"
      // Attempts to outlive the Run.
      "(setsid sleep 3171 >/dev/null 2>&1 &)\n"
      "nohup sleep 3172 >/dev/null 2>&1 &\n"
      "echo probes-done";
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module(script)}});
  auto plan = stack.plan(probe_capsule(stack, repo));
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack.agent_logs();
  // Planted once the agent runs Runs: at start it wipes workspaces no journaled Run owns.
  write(other_workspace, "another Run's plaintext state");
  auto applied = stack.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << stack.agent_logs();
  const auto logs = run_logs(stack, applied);
  ASSERT_NE(logs.find("probes-done"), std::string::npos) << logs;

  for (const auto& [name, path] : secrets) {
    EXPECT_NE(logs.find("BLOCKED read-" + name), std::string::npos) << name << "\n" << logs;
    EXPECT_EQ(logs.find("REACHED read-" + name), std::string::npos) << name << " was readable";
  }
  for (const char* what : {"write-usr", "write-etc", "write-root"})
    EXPECT_NE(logs.find(std::string("BLOCKED ") + what), std::string::npos) << what << "\n" << logs;
  EXPECT_FALSE(fs::exists(outside)) << "a write outside the workspace reached the host";
  EXPECT_FALSE(fs::exists(agent / "state" / "planted")) << "a write reached the agent's state";
  EXPECT_FALSE(fs::exists("/usr/takosumi-probe"));
  for (const char* what : {"write-workspace", "write-real-world", "read-system"})
    EXPECT_NE(logs.find(std::string("REACHED ") + what), std::string::npos) << what << "\n" << logs;
  EXPECT_TRUE(fs::exists(stack.real_world() / "probe.txt"));

  EXPECT_FALSE(process_running("sleep 3171")) << "a setsid background process survived the Run";
  EXPECT_FALSE(process_running("sleep 3172")) << "a nohup background process survived the Run";
}

TEST(Sandbox, NetworkNoneCannotReachALoopbackListenerOutsideTheSandbox) {
  LoopbackListener listener;
  {
    // Control: with the default network the same probe connects.
    Stack stack;
    TestGitRepo repo(stack.root() / "repo");
    repo.commit({{"main.tf", provisioner_module(connect_probe(listener.port()))}});
    auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
    ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
    EXPECT_NE(run_logs(stack, applied).find("(local-exec): NETWORK-CONNECTED"), std::string::npos)
        << run_logs(stack, applied);
  }
  StackOptions offline;
  offline.sandbox_yaml = "sandbox:\n  network: none\n";
  Stack stack(offline);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module(connect_probe(listener.port()))}});
  auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  const auto logs = run_logs(stack, applied);
  EXPECT_NE(logs.find("(local-exec): NETWORK-REFUSED"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("(local-exec): NETWORK-CONNECTED"), std::string::npos) << logs;
}

TEST(Sandbox, WithoutBubblewrapTheRunFailsAndNothingRuns) {
  StackOptions options;
  options.sandbox_yaml = "sandbox:\n  bubblewrap: /nonexistent/bwrap\n";
  Stack stack(options);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module("echo should-never-run")}});
  auto plan = stack.plan(probe_capsule(stack, repo));
  EXPECT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  EXPECT_EQ(failure_code(plan), "sandbox_failed") << json::serialize(plan);
  EXPECT_NE(str(plan.at("failure").as_object(), "message").find("/nonexistent/bwrap"), std::string::npos);
  const auto logs = run_logs(stack, plan);
  EXPECT_EQ(logs.find("Initializing"), std::string::npos) << "tofu ran unsandboxed:\n" << logs;
}

TEST(Sandbox, ARunPastItsWallClockLimitEndsTimedOutWithNothingLeft) {
  StackOptions options;
  options.tofu_timeout_seconds = 10;
  Stack stack(options);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module("nohup sleep 3173 >/dev/null 2>&1 &\nsleep 600")}});
  auto plan = stack.plan(probe_capsule(stack, repo));
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  auto applied = stack.apply(str(plan, "id"));
  EXPECT_EQ(str(applied, "status"), "failed") << json::serialize(applied);
  EXPECT_EQ(failure_code(applied), "timed_out") << json::serialize(applied);
  EXPECT_FALSE(process_running("sleep 3173")) << "a process of the Run survived the time limit";
  EXPECT_FALSE(process_running("sleep 600")) << "a process of the Run survived the time limit";
}

}  // namespace
}  // namespace takosumi::testing
