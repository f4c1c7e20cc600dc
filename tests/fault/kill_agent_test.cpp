// SIGKILL of the agent at 20 moments of an apply that creates files one after another with slow
// resources in between. Every time, once the restarted agent has recovered, the Capsule's current
// StateVersion must hold exactly the files that exist in reality, and the apply must have run once
// (one attempt, at most one StateVersion). The 20 outcomes are printed as a table.
#include <gtest/gtest.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/fault/fault_support.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

struct Outcome {
  int moment_ms = 0;
  std::string phase_at_kill;
  std::string status;
  std::string code;
  std::int64_t attempt = 0;
  std::size_t applies = 0;  // run.apply_started events: the apply was begun this many times
  std::size_t versions = 0;
  bool partial = false;
  std::set<std::string> in_state;
  std::set<std::string> in_reality;
};

int registrations(const Stack& stack) {
  const auto log = read_text(stack.agent_dir(0) / "agent.log");
  int n = 0;
  for (auto at = log.find("registered with"); at != std::string::npos;
       at = log.find("registered with", at + 1))
    ++n;
  return n;
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "-" : out;
}

void print(const std::vector<Outcome>& outcomes) {
  std::ostringstream t;
  t << "\nSIGKILL of the agent during an apply (4 files, 0.5 s apart); outcome after restart:\n"
    << std::left << std::setw(4) << "#" << std::setw(8) << "kill@ms" << std::setw(11) << "journal"
    << std::setw(11) << "status" << std::setw(13) << "code" << std::setw(8) << "attempt" << std::setw(8) << "applies"
    << std::setw(5) << "SVs" << std::setw(8) << "partial" << std::setw(14) << "state"
    << "reality\n";
  int i = 0;
  for (const auto& o : outcomes)
    t << std::setw(4) << ++i << std::setw(8) << o.moment_ms
      << std::setw(11) << (o.phase_at_kill.empty() ? "-" : o.phase_at_kill) << std::setw(11)
      << o.status << std::setw(13) << (o.code.empty() ? "-" : o.code) << std::setw(8) << o.attempt << std::setw(8) << o.applies
      << std::setw(5) << o.versions << std::setw(8) << (o.partial ? "yes" : "no") << std::setw(14)
      << join(o.in_state) << join(o.in_reality) << "\n";
  std::cout << t.str() << std::flush;
}

TEST(KillAgent, EveryResourceInRealityIsInTheStateAfterASigkillAtTwentyMoments) {
  StackOptions options;
  options.concurrency = 1;
  // A claim answered to the agent just killed holds its Run until the lease expires; a short
  // lease keeps those waits short. (An apply that started is never re-claimed, whatever the lease.)
  options.lease_seconds = 10;
  Stack stack(options);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", slow_chain_module(4, "500ms")}});
  std::vector<Outcome> outcomes;
  for (int i = 0; i < 20; ++i) {
    SCOPED_TRACE("moment " + std::to_string(i));
    const auto name = "k" + std::to_string(i);
    const auto out_dir = stack.real_world() / name;
    const auto [capsule, run_id] = plan_and_start_apply(stack, repo.url(), name);
    ASSERT_FALSE(run_id.empty());
    ASSERT_TRUE(wait_until_running(stack, run_id));

    Outcome o;
    o.moment_ms = i * 200;  // from the claim to after the apply's end (about 3 s)
    std::this_thread::sleep_for(std::chrono::milliseconds(o.moment_ms));
    o.phase_at_kill = journaled_phase(stack, 0, run_id);
    const int before = registrations(stack);
    stack.kill_agent(0);
    stack.start_agent(0);
    // Up and registered (a stop signal while the process is still being exec'd would kill it).
    ASSERT_TRUE(eventually([&] { return registrations(stack) > before; }, std::chrono::seconds(60)));

    auto run = stack.wait_run(run_id);
    o.status = str(run, "status");
    o.code = failure_code(run);
    o.attempt = run.at("attempt").as_int64();
    o.applies = run_events(stack, "run.apply_started", run_id).size();
    auto versions = stack.state_versions(capsule);
    o.versions = versions.size();
    auto sv = current_state_version(stack, capsule);
    if (!sv.empty()) {
      o.partial = sv.at("partial").as_bool();
      o.in_state = files_in_state(stack.state_plaintext(str(sv, "ciphertextSha256")));
    }
    o.in_reality = files_in(out_dir);
    outcomes.push_back(o);

    EXPECT_TRUE(o.status == "succeeded" || (o.status == "failed" && o.code == "interrupted"))
        << json::serialize(run);
    EXPECT_EQ(o.in_state, o.in_reality) << "the StateVersion forgets or invents a resource";
    // A Run killed before its apply started may be handed out again once its lease expires;
    // an apply that started never is.
    EXPECT_LE(o.applies, 1u) << "the apply was started twice";
    EXPECT_LE(o.versions, 1u) << "the apply produced more than one StateVersion";
    if (o.status == "failed" && !sv.empty()) {
      EXPECT_TRUE(o.partial);
      EXPECT_TRUE(stack.capsule(capsule).at("needsAttention").as_bool());
    }
    if (o.status == "succeeded") {
      EXPECT_EQ(o.in_reality.size(), 4u);
      EXPECT_FALSE(o.partial);
    }
    EXPECT_FALSE(process_running_under(stack.agent_dir(0) / "work"))
        << "a process of the interrupted apply outlived the recovery";
  }
  print(outcomes);
  EXPECT_TRUE(std::ranges::any_of(outcomes, [](const Outcome& o) { return o.code == "interrupted" && !o.in_state.empty(); }))
      << "no moment interrupted the apply after it had created something";
}

}  // namespace
}  // namespace takosumi::testing
