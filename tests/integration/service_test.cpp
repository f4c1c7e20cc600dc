// The daemons as systemd services: the notify protocol (READY, STATUS, WATCHDOG, STOPPING,
// RELOADING) on a real datagram socket, the stop ladder (a second signal cancels), SIGHUP reloads,
// ephemeral agents and structured logs.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/fifo_gate.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/notify_listener.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

constexpr long kWatchdogUsec = 1'000'000;  // pings every half second

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void replace_in_file(const std::filesystem::path& file, const std::string& from,
                     const std::string& to) {
  auto text = read_all(file);
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << file;
  text.replace(at, from.size(), to);
  std::ofstream(file, std::ios::trunc) << text;
}

std::string post_plan(Stack& stack, const std::string& capsule) {
  auto r = stack.api().post("/api/v1/capsules/" + capsule + "/plan", json::object{});
  EXPECT_EQ(r.status, 201u) << r.body;
  return r.json.is_object() ? str(r.json.as_object(), "id") : "";
}

std::string run_status(Stack& stack, const std::string& run_id) {
  auto r = stack.api().get("/api/v1/runs/" + run_id);
  return r.json.is_object() ? str(r.json.as_object(), "status") : "";
}

// agent-0 as GET /api/v1/agents lists it (empty before it registered).
json::object agent_entry(Stack& stack) {
  auto r = stack.api().get("/api/v1/agents");
  if (!r.json.is_object()) return {};
  for (const auto& a : r.json.at("agents").as_array())
    if (str(a.as_object(), "name") == "agent-0") return a.as_object();
  return {};
}

std::int64_t total_slots(Stack& stack) {
  auto agent = agent_entry(stack);
  return agent.contains("slots") ? agent.at("slots").as_object().at("total").as_int64() : -1;
}

constexpr const char* kTrivialModule = "resource \"terraform_data\" \"x\" { input = \"hi\" }\n";

std::string statuses(NotifyListener& systemd) {
  std::string all;
  for (const auto& a : systemd.received())
    if (a.rfind("STATUS=", 0) == 0) all += a + "\n";
  return all;
}

TEST(ServiceNotify, TheAgentReportsReadyItsSlotsWatchdogPingsAndStopping) {
  TempDir sockets;
  NotifyListener systemd(sockets.path() / "notify");
  StackOptions options;
  options.concurrency = 1;
  options.agent_env = systemd.environment(kWatchdogUsec);
  Stack stack(options);
  ASSERT_TRUE(systemd.wait_for("READY=1", 60s)) << stack.agent_logs();
  EXPECT_TRUE(systemd.wait_for("STATUS=idle, 0/1 slots", 10s));
  EXPECT_TRUE(eventually([&] { return systemd.count("WATCHDOG=1") >= 3; }, 10s));

  FifoGate gate(stack.real_world() / "gate");
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", gate.module()}});
  auto capsule = stack.create_capsule(repo.url(), {}, {});
  const auto run_id = post_plan(stack, capsule);
  EXPECT_TRUE(systemd.wait_for("STATUS=running 1 Run(s), 1/1 slots", 120s))
      << statuses(systemd) << stack.agent_logs();
  systemd.forget();
  ASSERT_TRUE(gate.open(120s));
  EXPECT_EQ(str(stack.wait_run(run_id), "status"), "succeeded");
  EXPECT_TRUE(systemd.wait_for("STATUS=idle, 0/1 slots", 30s));

  stack.stop_agents();
  EXPECT_TRUE(systemd.seen("STOPPING=1"));
  EXPECT_TRUE(systemd.seen("STATUS=stopping"));
}

// A loop that stops turning stops the pings, and systemd (WatchdogSec=) restarts the agent.
TEST(ServiceNotify, AStalledEventLoopStopsTheWatchdogPings) {
  TempDir sockets;
  NotifyListener systemd(sockets.path() / "notify");
  StackOptions options;
  options.agent_env = systemd.environment(kWatchdogUsec);
  Stack stack(options);
  ASSERT_TRUE(systemd.wait_for("READY=1", 60s)) << stack.agent_logs();
  ASSERT_TRUE(eventually([&] { return systemd.count("WATCHDOG=1") >= 2; }, 10s));
  stack.signal_agent(0, SIGUSR2);
  ASSERT_TRUE(eventually([&] {
    return stack.agent_log(0).find("stalling the event loop") != std::string::npos;
  }, 10s));
  systemd.forget();
  // Six intervals: a live loop pings twelve times meanwhile.
  std::this_thread::sleep_for(std::chrono::microseconds(6 * kWatchdogUsec));
  EXPECT_EQ(systemd.count("WATCHDOG=1"), 0u);
  stack.kill_agent(0);
}

TEST(ServiceNotify, TheControlPlaneReportsReadyWatchdogReloadingAndStopping) {
  TempDir sockets;
  NotifyListener systemd(sockets.path() / "notify");
  StackOptions options;
  options.agents = 0;
  options.control_env = systemd.environment(kWatchdogUsec);
  Stack stack(options);
  ASSERT_TRUE(systemd.wait_for("READY=1", 30s));
  const auto status = "STATUS=serving http on 127.0.0.1:" + std::to_string(stack.port()) +
                      "; 0 Run(s) waiting for an agent, 0 running, 0 agent(s) connected";
  EXPECT_TRUE(systemd.seen(status)) << statuses(systemd);
  EXPECT_TRUE(eventually([&] { return systemd.count("WATCHDOG=1") >= 3; }, 10s));
  systemd.forget();
  stack.reload_control();
  EXPECT_TRUE(systemd.wait_for("RELOADING=1", 10s));
  EXPECT_TRUE(systemd.wait_for("READY=1", 10s));
  stack.stop_control(false);
  EXPECT_TRUE(systemd.seen("STOPPING=1"));
}

// SIGINT drains (the apply goes on), then SIGQUIT cancels it: tofu is interrupted, the state it
// saved is delivered, and the agent exits 0 once it is.
TEST(AgentSignals, ASecondStopSignalCancelsTheRunningApplyAndDeliversItsState) {
  Stack stack;
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", slow_apply_module()}});
  auto capsule = stack.create_capsule(repo.url(), {}, {});
  auto plan = stack.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  auto started = stack.api().post("/api/v1/runs/" + str(plan, "id") + "/apply", json::object{});
  ASSERT_EQ(started.status, 201u) << started.body;
  const auto run_id = str(started.json.as_object(), "id");
  ASSERT_TRUE(eventually([&] {
    return stack.api().get("/api/v1/runs/" + run_id + "/logs").body.find(
               "time_sleep.slow: Creating") != std::string::npos;
  }, 120s)) << stack.agent_logs();

  stack.signal_agent(0, SIGINT);
  ASSERT_TRUE(eventually([&] {
    return stack.agent_log(0).find("stop requested") != std::string::npos;
  }, 10s));
  EXPECT_EQ(run_status(stack, run_id), "running") << "the first signal must not stop the apply";
  stack.signal_agent(0, SIGQUIT);
  EXPECT_EQ(stack.wait_agent_exit(0, 120s), 0) << stack.agent_log(0);

  auto run = stack.wait_run(run_id, 30s);
  EXPECT_EQ(str(run, "status"), "cancelled") << json::serialize(run);
  auto versions = stack.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u) << "the state tofu persisted was not delivered";
  EXPECT_TRUE(versions[0].at("partial").as_bool());
}

// Three stop signals in a row: the third ends the agent at once (exit 1), as a crash would, and
// the next start settles the Run it held.
TEST(AgentSignals, AThirdStopSignalEndsTheAgentAtOnceAndTheNextStartSettlesItsRun) {
  Stack stack;
  FifoGate gate(stack.real_world() / "gate");
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", gate.module()}});
  const auto run_id = post_plan(stack, stack.create_capsule(repo.url(), {}, {}));
  // Held by the agent: claimed (the control plane says running) is not yet taken in hand (the
  // agent logs the Run once its manifest is verified and the Run journaled).
  ASSERT_TRUE(eventually([&] {
    return run_status(stack, run_id) == "running" &&
           stack.agent_log(0).find("run " + run_id + ": plan of capsule") != std::string::npos;
  }, 60s)) << stack.agent_log(0);
  stack.signal_agent(0, SIGTERM);
  stack.signal_agent(0, SIGINT);
  stack.signal_agent(0, SIGQUIT);
  EXPECT_EQ(stack.wait_agent_exit(0, 60s), 1) << stack.agent_log(0);
  EXPECT_NE(stack.agent_log(0).find("third stop signal"), std::string::npos) << stack.agent_log(0);
  stack.start_agent(0);
  (void)gate.open(10s);  // a new attempt may read the gate again
  auto run = stack.wait_run(run_id, 120s);
  EXPECT_NE(str(run, "status"), "running") << json::serialize(run);
}

TEST(AgentSignals, SighupChangesConcurrencyForTheNextClaimAndKeepsOutAnInvalidFile) {
  StackOptions options;
  options.concurrency = 1;
  Stack stack(options);
  const auto config = stack.agent_config(0);
  ASSERT_TRUE(eventually([&] { return total_slots(stack) == 1; }, 30s));

  // Refused: the old file stays in force and the agent keeps working.
  replace_in_file(config, "concurrency: 1", "concurrency: 0");
  stack.signal_agent(0, SIGHUP);
  ASSERT_TRUE(eventually([&] {
    return stack.agent_log(0).find("configuration file was refused") != std::string::npos;
  }, 10s)) << stack.agent_log(0);
  EXPECT_NE(stack.agent_log(0).find("concurrency must be"), std::string::npos) << stack.agent_log(0);

  replace_in_file(config, "concurrency: 0", "concurrency: 2");
  stack.signal_agent(0, SIGHUP);
  ASSERT_TRUE(eventually([&] { return total_slots(stack) == 2; }, 30s)) << stack.agent_log(0);

  // Two gated plans run side by side: the second slot is in use.
  std::filesystem::create_directories(stack.real_world());
  FifoGate first(stack.real_world() / "gate-1"), second(stack.real_world() / "gate-2");
  TestGitRepo repo_1(stack.root() / "repo-1"), repo_2(stack.root() / "repo-2");
  repo_1.commit({{"main.tf", first.module()}});
  repo_2.commit({{"main.tf", second.module()}});
  const auto run_1 = post_plan(stack, stack.create_capsule(repo_1.url(), {}, {}, "one"));
  const auto run_2 = post_plan(stack, stack.create_capsule(repo_2.url(), {}, {}, "two"));
  EXPECT_TRUE(eventually([&] {
    return run_status(stack, run_1) == "running" && run_status(stack, run_2) == "running";
  }, 120s)) << stack.agent_log(0);
  ASSERT_TRUE(first.open(120s));
  ASSERT_TRUE(second.open(120s));
  EXPECT_EQ(str(stack.wait_run(run_1), "status"), "succeeded");
  EXPECT_EQ(str(stack.wait_run(run_2), "status"), "succeeded");
}

TEST(Ephemeral, OnceRunsExactlyOneRunDeregistersAndExitsZero) {
  StackOptions options;
  options.agents = 0;
  options.agent_args = {"--once"};
  Stack stack(options);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", kTrivialModule}});
  const auto run_1 = post_plan(stack, stack.create_capsule(repo.url(), {}, {}, "one"));
  const auto run_2 = post_plan(stack, stack.create_capsule(repo.url(), {}, {}, "two"));
  stack.start_agent(0);
  EXPECT_EQ(stack.wait_agent_exit(0, 240s), 0) << stack.agent_log(0);
  const auto s1 = run_status(stack, run_1), s2 = run_status(stack, run_2);
  EXPECT_TRUE((s1 == "succeeded" && s2 == "queued") || (s1 == "queued" && s2 == "succeeded"))
      << s1 << " " << s2;
  EXPECT_EQ(str(agent_entry(stack), "state"), "deregistered");
  EXPECT_FALSE(std::filesystem::exists(stack.agent_dir(0) / "state/agent-credential"));

  // The next pod of the pool: the same name, a fresh state directory (a new key). Every agent of
  // the name has left, so the name is free; it takes the other Run.
  std::filesystem::remove_all(stack.agent_dir(0) / "state");
  stack.start_agent(0);
  EXPECT_EQ(stack.wait_agent_exit(0, 240s), 0) << stack.agent_log(0);
  EXPECT_EQ(run_status(stack, run_1), "succeeded");
  EXPECT_EQ(run_status(stack, run_2), "succeeded");
  auto listed = stack.api().get("/api/v1/agents").json.as_object().at("agents").as_array();
  ASSERT_EQ(listed.size(), 2u);
  for (const auto& a : listed) EXPECT_EQ(str(a.as_object(), "state"), "deregistered");
}

TEST(JsonLogs, EveryLineIsOneObjectAndLinesAboutARunCarryIt) {
  StackOptions options;
  options.extra_agent_yaml = "logFormat: json\n";
  Stack stack(options);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", kTrivialModule}});
  auto capsule = stack.create_capsule(repo.url(), {}, {});
  auto plan = stack.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded");
  stack.stop_agents();
  std::istringstream lines(stack.agent_log(0));
  std::string line;
  int parsed = 0, about_run = 0, with_phase = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    ASSERT_FALSE(ec) << "not JSON: " << line;
    ASSERT_TRUE(v.is_object()) << line;
    const auto& o = v.as_object();
    EXPECT_TRUE(o.contains("time") && o.contains("level") && o.contains("message")) << line;
    ++parsed;
    if (str(o, "runId") != str(plan, "id")) continue;
    ++about_run;
    // Once journaled (the manifest verified), the Run's attempt and phase come with it.
    if (!o.contains("attempt")) continue;
    ++with_phase;
    EXPECT_EQ(o.at("attempt").as_int64(), 1) << line;
    EXPECT_FALSE(str(o, "phase").empty()) << line;
  }
  EXPECT_GT(parsed, 5);
  EXPECT_GT(about_run, 1);
  EXPECT_GT(with_phase, 0);
}

std::filesystem::path write_hook(const std::filesystem::path& file, const std::string& body) {
  std::ofstream(file) << "#!/bin/sh\n" << body;
  std::filesystem::permissions(file, std::filesystem::perms::owner_all);
  return file;
}

// Hooks run in the Run's sandbox (the agent's keys are not there), with the Run's environment;
// their output reaches the Run's log redacted; a failing pre-plan hook fails the Run before init.
TEST(Hooks, AFailingPrePlanHookFailsTheRunBeforeInitAndItsOutputIsRedacted) {
  TempDir hooks;
  const auto pre = write_hook(hooks.path() / "pre-plan",
                              "echo \"pre $TAKOSUMI_HOOK for $TAKOSUMI_RUN_TYPE $TAKOSUMI_RUN_ID\"\n"
                              "echo 'db password=hunter2-in-a-hook'\n"
                              "[ -e \"$AGENT_KEYS\" ] && echo 'agent keys visible' || echo 'agent keys hidden'\n"
                              "[ $$ -lt 100 ] && echo 'own pid namespace'\n"
                              "[ -e \"$TAKOSUMI_FAIL\" ] && exit 3\n"
                              "exit 0\n");
  StackOptions options;
  options.extra_agent_yaml = "hooks:\n  prePlan: " + pre.string() + "\n  postPlan: " +
                             write_hook(hooks.path() / "post-plan", "echo \"post $TAKOSUMI_HOOK\"\nexit 5\n")
                                 .string() +
                             "\n  timeoutSeconds: 20\n";
  Stack stack(options);
  // The agent's own keys exist outside the sandbox, not in it.
  const auto keys = stack.agent_dir(0) / "state/keys/agent-sign.key";
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(keys); }, 30s));
  replace_in_file(pre, "\"$AGENT_KEYS\"", "\"" + keys.string() + "\"");
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", kTrivialModule}});
  auto capsule = stack.create_capsule(repo.url(), {}, {});

  auto passed = stack.plan(capsule);
  ASSERT_EQ(str(passed, "status"), "succeeded") << json::serialize(passed);
  const auto log = stack.api().get("/api/v1/runs/" + str(passed, "id") + "/logs").body;
  EXPECT_NE(log.find("pre prePlan for plan " + str(passed, "id")), std::string::npos) << log;
  EXPECT_NE(log.find("post postPlan"), std::string::npos) << log;
  // A failing post-hook is noted; the plan it followed stands (succeeded above).
  EXPECT_NE(log.find("hook postPlan exited 5; the Run's result stands"), std::string::npos) << log;
  EXPECT_NE(log.find("agent keys hidden"), std::string::npos) << log;
  EXPECT_NE(log.find("own pid namespace"), std::string::npos) << log;
  EXPECT_EQ(log.find("hunter2-in-a-hook"), std::string::npos) << log;
  EXPECT_NE(log.find("password=[REDACTED]"), std::string::npos) << log;
  EXPECT_NE(log.find("Initializing"), std::string::npos) << "init's output is how the test tells";
  EXPECT_LT(log.find("pre prePlan"), log.find("Initializing"));

  // The same hook, told to fail (a file in the real world it can see): hook_failed, no init.
  std::filesystem::create_directories(stack.real_world());
  std::ofstream(stack.real_world() / "fail") << "x";
  replace_in_file(pre, "\"$TAKOSUMI_FAIL\"", "\"" + (stack.real_world() / "fail").string() + "\"");
  auto failed = stack.plan(capsule);
  EXPECT_EQ(str(failed, "status"), "failed");
  EXPECT_EQ(failure_code(failed), "hook_failed") << json::serialize(failed);
  const auto failed_log = stack.api().get("/api/v1/runs/" + str(failed, "id") + "/logs").body;
  EXPECT_NE(failed_log.find("pre prePlan"), std::string::npos) << failed_log;
  EXPECT_EQ(failed_log.find("Initializing"), std::string::npos) << "tofu init ran: " << failed_log;
  EXPECT_EQ(failed_log.find("post postPlan"), std::string::npos) << failed_log;
}

// The value of one series in a Prometheus text exposition ("name{labels} value"), or -1.
double series(const std::string& exposition, const std::string& name_and_labels) {
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind(name_and_labels + " ", 0) == 0)
      return std::stod(line.substr(name_and_labels.size() + 1));
  return -1;
}

unsigned short agent_metrics_port(Stack& stack) {
  static const std::regex kPort(R"(metrics and health on [^ ]+ \(port ([0-9]+)\))");
  std::smatch m;
  const auto log = stack.agent_log(0);
  if (!std::regex_search(log, m, kPort)) return 0;
  return static_cast<unsigned short>(std::stoi(m[1]));
}

TEST(Metrics, ScrapesMoveWithAPlanAndAnApplyCarryNoSecretAndReadinessFollowsTheDrain) {
  StackOptions options;
  options.extra_agent_yaml = "metrics:\n  listen: 127.0.0.1:0\n";
  Stack stack(options);
  ASSERT_TRUE(eventually([&] { return agent_metrics_port(stack) != 0; }, 30s)) << stack.agent_log(0);
  const HttpClient agent(agent_metrics_port(stack), "");
  const HttpClient control(stack.metrics_port(), "");
  ASSERT_TRUE(eventually([&] { return agent.get("/health/ready").status == 200; }, 30s));
  EXPECT_EQ(agent.get("/health/live").status, 200u);
  EXPECT_EQ(control.get("/health/ready").status, 200u);

  const std::string plan_series = R"(takosumi_agent_runs_total{result="succeeded",type="plan"})";
  const std::string apply_series = R"(takosumi_agent_runs_total{result="succeeded",type="apply"})";
  auto before = agent.get("/metrics");
  ASSERT_EQ(before.status, 200u);
  // Every series is there from the start, at zero.
  EXPECT_EQ(series(before.body, plan_series), 0);
  EXPECT_EQ(series(before.body, R"(takosumi_agent_runs_total{result="cancelled",type="drift_check"})"), 0);
  EXPECT_EQ(series(before.body, R"(takosumi_agent_phase_duration_seconds_count{phase="apply"})"), 0);
  EXPECT_EQ(series(before.body, "takosumi_agent_delivery_retries_total"), 0);
  EXPECT_EQ(series(before.body, "takosumi_agent_slots"), 2);
  auto control_before = control.get("/metrics").body;
  EXPECT_EQ(series(control_before, "takosumi_control_state_versions_created_total"), 0);
  EXPECT_EQ(series(control_before, R"(takosumi_control_queue_depth{labels="",pool="default"})"), 0);
  EXPECT_EQ(series(control_before, R"(takosumi_control_runs{status="succeeded"})"), 0);

  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", example_module("hello")}});
  const auto out_dir = stack.real_world() / "out";
  std::filesystem::create_directories(out_dir);
  auto capsule = stack.create_capsule(repo.url(), json::object{{"out_dir", out_dir.string()}}, {});
  auto plan = stack.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  auto applied = stack.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);

  auto after = agent.get("/metrics").body;
  EXPECT_EQ(series(after, plan_series), 1);
  EXPECT_EQ(series(after, apply_series), 1);
  for (const std::string phase : {"claim_wait", "checkout", "init", "plan", "apply", "delivery"}) {
    const auto name = "takosumi_agent_phase_duration_seconds_count{phase=\"" + phase + "\"}";
    EXPECT_GE(series(after, name), 1) << phase;
  }
  EXPECT_GT(series(after, R"(takosumi_agent_control_plane_requests_total{status="2xx"})"), 4);
  auto control_after = control.get("/metrics").body;
  EXPECT_EQ(series(control_after, "takosumi_control_state_versions_created_total"), 1);
  EXPECT_EQ(series(control_after, R"(takosumi_control_runs{status="succeeded"})"), 2);
  EXPECT_GE(series(control_after,
                   R"(takosumi_control_http_requests_total{code="2xx",route="POST /api/v1/capsules/{}/plan"})"),
            1);
  EXPECT_EQ(series(control_after, "takosumi_control_agents_connected"), 1);
  // Nothing secret, nothing unbounded: no password, token or id of a Run in any label.
  const auto password = read_text(out_dir / "db.password");
  ASSERT_FALSE(password.empty());
  for (const auto& scrape : {after, control_after}) {
    EXPECT_EQ(scrape.find(password), std::string::npos);
    EXPECT_EQ(scrape.find("test-api-token"), std::string::npos);
    EXPECT_EQ(scrape.find("test-pool-token"), std::string::npos);
    EXPECT_EQ(scrape.find(str(plan, "id")), std::string::npos);
    EXPECT_EQ(scrape.find(capsule), std::string::npos);
  }

  // Draining: not ready, while the Run it still holds goes on.
  FifoGate gate(stack.real_world() / "gate");
  TestGitRepo gated(stack.root() / "gated");
  gated.commit({{"main.tf", gate.module()}});
  const auto held = post_plan(stack, stack.create_capsule(gated.url(), {}, {}, "held"));
  ASSERT_TRUE(eventually([&] { return run_status(stack, held) == "running"; }, 60s));
  stack.signal_agent(0, SIGTERM);
  EXPECT_TRUE(eventually([&] { return agent.get("/health/ready").status == 503; }, 10s));
  EXPECT_NE(agent.get("/health/ready").body.find("draining"), std::string::npos);
  EXPECT_EQ(agent.get("/health/live").status, 200u);
  ASSERT_TRUE(gate.open(120s));
  EXPECT_EQ(str(stack.wait_run(held), "status"), "succeeded");
  EXPECT_EQ(stack.wait_agent_exit(0, 60s), 0);
}

}  // namespace
}  // namespace takosumi::testing
