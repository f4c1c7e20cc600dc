#include "runner/tofu/boost_process_launcher.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/file_lock.hpp"
#include "redaction/line_splitter.hpp"
#include "tests/support/run_to_end.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::runner {
namespace {

using namespace std::chrono_literals;
using testing::run_to_end;
using takosumi::testing::TempDir;

struct Captured {
  std::vector<std::string> out;
  std::vector<std::string> err;
  std::vector<std::string> out_chunks;  // as the launcher passed them on
  std::vector<std::string> err_chunks;
};

// Runs misbehave (or another program) through the real launcher, directly or under
// takosumi-supervise.
class LauncherFixture : public ::testing::Test {
 protected:
  explicit LauncherFixture(bool supervised) : supervised_(supervised) {}
  ProcessSpec spec(std::vector<std::string> args) {
    ProcessSpec s;
    s.program = test_paths::misbehave;
    s.args = std::move(args);
    s.env = {"PATH=/usr/bin:/bin", "ONLY_THIS=1"};
    s.cwd = dir_.path();
    s.timeout = 60s;
    s.kill_grace = 200ms;
    if (supervised_) s.supervisor = SupervisorSpec{test_paths::supervise, lock_};
    return s;
  }
  // Output arrives in chunks; the test reads it as lines (cut at 64 KiB), as TofuCli does.
  Result<ProcessExit> run(ProcessSpec s, std::function<void(std::string_view)> on_out = nullptr) {
    redaction::LineSplitter out(64 * 1024, [&](std::string_view line) {
      seen_.out.emplace_back(line);
      if (on_out) on_out(line);
    });
    redaction::LineSplitter err(64 * 1024, [&](std::string_view line) { seen_.err.emplace_back(line); });
    OutputSink sink = [&](OutputStream stream, std::string_view bytes) {
      (stream == OutputStream::out ? seen_.out_chunks : seen_.err_chunks).emplace_back(bytes);
      (stream == OutputStream::out ? out : err).feed(bytes);
    };
    auto r = run_to_end(io_, launcher_.async_run(std::move(s), sink, cancel_));
    out.finish();
    err.finish();
    return r;
  }
  // Cancels as soon as the child printed "ready".
  Result<ProcessExit> run_and_cancel(ProcessSpec s) {
    return run(std::move(s), [&](std::string_view l) {
      if (l == "ready") cancel_.request();
    });
  }

  const bool supervised_;
  boost::asio::io_context io_;
  BoostProcessLauncher launcher_;
  CancelSignal cancel_;
  Captured seen_;
  TempDir dir_;
  std::filesystem::path lock_ = dir_ / "tofu.lock";
};

// Every behaviour of the launcher, with the program started directly and under the supervisor.
class LauncherTest : public LauncherFixture, public ::testing::WithParamInterface<bool> {
 protected:
  LauncherTest() : LauncherFixture(GetParam()) {}
};

INSTANTIATE_TEST_SUITE_P(Launcher, LauncherTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Supervised" : "Direct"; });

class SupervisedLauncherTest : public LauncherFixture {
 protected:
  SupervisedLauncherTest() : LauncherFixture(true) {}
};

TEST_P(LauncherTest, StreamsLinesAndReportsExitCode) {
  auto r = run(spec({"lines", "3", "7"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_FALSE(r->cancelled);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"line 0", "line 1", "line 2"}));
  EXPECT_EQ(seen_.err, (std::vector<std::string>{"err"}));
}

// The agent's threads block its stop signals (only the io thread takes them); what it starts must
// not inherit that, or the stop ladder's SIGINT would never reach tofu.
TEST_P(LauncherTest, NothingStartedInheritsTheSpawningThreadsBlockedSignals) {
  sigset_t stop, before;
  ::sigemptyset(&stop);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaddset(&stop, sig);
  ::pthread_sigmask(SIG_BLOCK, &stop, &before);
  auto s = spec({});
  s.program = "/bin/sh";
  s.args = {"-c", "grep SigBlk /proc/self/status"};
  auto r = run(std::move(s));
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"SigBlk:\t0000000000000000"})) << ::testing::PrintToString(seen_.err);
}

TEST_P(LauncherTest, EnvironmentIsExactlyTheGivenOne) {
  auto r = run(spec({"env"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"PATH=/usr/bin:/bin", "ONLY_THIS=1"}));
}

TEST_P(LauncherTest, RunsInTheGivenDirectory) {
  auto r = run(spec({"pwd"}));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(seen_.out.size(), 1u);
  EXPECT_EQ(std::filesystem::path(seen_.out[0]), std::filesystem::canonical(dir_.path()));
}

TEST_P(LauncherTest, OutputArrivesAsBoundedChunksOfTheRawBytes) {
  auto r = run(spec({"long", std::to_string(150 * 1024)}));
  ASSERT_TRUE(r) << r.error().to_string();
  std::string all;
  for (const auto& chunk : seen_.out_chunks) {
    EXPECT_LE(chunk.size(), 16u * 1024);
    all += chunk;
  }
  EXPECT_GE(seen_.out_chunks.size(), 10u);
  EXPECT_EQ(all.size(), 150u * 1024 + 1 + 4);  // the long line, its '\n', "end\n"
  EXPECT_TRUE(all.ends_with("\nend\n"));
  ASSERT_EQ(seen_.out.size(), 4u);  // the reader's 64 KiB cut, not the launcher's
  EXPECT_EQ(seen_.out[3], "end");
}

TEST_P(LauncherTest, StdoutCanGoToAFileInstead) {
  auto s = spec({"lines", "2", "0"});
  s.stdout_file = dir_.path() / "out.txt";
  auto r = run(std::move(s));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(seen_.out.empty());
  EXPECT_EQ(seen_.err, (std::vector<std::string>{"err"}));
  EXPECT_EQ(std::filesystem::file_size(dir_.path() / "out.txt"), std::string("line 0\nline 1\n").size());
}

TEST_P(LauncherTest, CancelInterruptsAChildThatExitsOnSigint) {
  auto r = run(spec({"exit-on-sigint"}), [&](std::string_view l) {
    if (l == "ready") cancel_.request();
  });
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, 42);
  EXPECT_EQ(r->term_signal, 0);
}

TEST_P(LauncherTest, CancelKillsAChildThatIgnoresSigint) {
  auto r = run(spec({"ignore-sigint"}), [&](std::string_view l) {
    if (l == "ready") cancel_.request();
  });
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->term_signal, SIGKILL);
}

TEST_P(LauncherTest, CancelBeforeStartStopsTheChildAtOnce) {
  cancel_.request();
  auto r = run(spec({"sleep"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_NE(r->exit_code, 0);
}

TEST_P(LauncherTest, WallClockLimitInterruptsAsTimedOut) {
  auto s = spec({"ignore-sigint"});
  s.timeout = 100ms;
  auto r = run(std::move(s));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->cancelled);
  EXPECT_EQ(r->term_signal, SIGKILL);
}

// A process that is neither running nor a zombie waiting for its parent.
bool gone_or_zombie(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  if (!(stat >> pid_field >> comm >> state)) return true;
  return state == "Z" || state == "X";
}

TEST_P(LauncherTest, LeftoversOfTheProcessGroupAreKilledAfterExit) {
  auto r = run(spec({"orphan"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 0);
  ASSERT_EQ(seen_.out.size(), 1u);
  const int grandchild = std::stoi(seen_.out[0].substr(std::string("grandchild ").size()));
  for (int i = 0; i < 100 && !gone_or_zombie(grandchild); ++i) ::usleep(10'000);
  EXPECT_TRUE(gone_or_zombie(grandchild));
}

TEST_P(LauncherTest, ResourceLimitsApplyToTheChildAndCoreDumpsAreOff) {
  auto s = spec({});
  s.program = "/bin/sh";
  s.args = {"-c", "ulimit -c; ulimit -t; ulimit -v"};
  s.limits.cpu_seconds = 7;
  s.limits.address_space_bytes = std::uint64_t{1} << 30;
  auto r = run(std::move(s));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"0", "7", "1048576"}));
}

// A wrapper that does not forward signals (like bubblewrap): with interrupt_group it starts with
// SIGINT ignored and the interrupt reaches the program inside, which handles it.
TEST_P(LauncherTest, GroupInterruptReachesTheProgramInsideAWrapper) {
  auto s = spec({});
  s.program = "/bin/sh";
  s.args = {"-c", std::string(test_paths::misbehave) + " exit-on-sigint; echo wrapper-exit=$?"};
  s.interrupt_group = true;
  auto r = run(std::move(s), [&](std::string_view l) {
    if (l == "ready") cancel_.request();
  });
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, 0) << "the wrapper itself ignored the interrupt";
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"ready", "wrapper-exit=42"}));
}

TEST_P(LauncherTest, MissingProgramIsAnError) {
  auto s = spec({});
  s.program = dir_.path() / "no-such-program";
  auto r = run(std::move(s));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "sandbox_failed");
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Like tofu: SIGINT makes it finish its work (writing on meanwhile) and exit 0.
TEST_P(LauncherTest, CancelLetsACommandThatHandlesSigintFinish) {
  auto s = spec({"interruptible", dir_.path().string()});
  s.kill_grace = 60s;  // it needs half a second
  auto r = run_and_cancel(std::move(s));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(seen_.out.back(), "tick");
  EXPECT_EQ(read_text(dir_ / "interrupted"), "interrupted 1\n");
}

TEST_P(LauncherTest, GroupCancelLetsACommandThatHandlesSigintFinish) {
  auto s = spec({"interruptible", dir_.path().string()});
  s.kill_grace = 60s;
  s.interrupt_group = true;
  auto r = run_and_cancel(std::move(s));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(read_text(dir_ / "interrupted"), "interrupted 1\n");
}

TEST_P(LauncherTest, CancelReportsTheInterruptThatEndedTheChild) {
  auto r = run_and_cancel(spec({"sleep"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->term_signal, SIGINT);
}

TEST_P(LauncherTest, DeathByASignalIsReportedAsThatSignal) {
  for (int sig : {SIGTERM, SIGUSR1, SIGHUP}) {
    auto s = spec({});
    s.program = "/bin/sh";
    s.args = {"-c", "kill -" + std::to_string(sig) + " $$"};
    auto r = run(std::move(s));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(r->exit_code, -1) << sig;
    EXPECT_EQ(r->term_signal, sig);
  }
}

TEST_F(SupervisedLauncherTest, TheProgramRunsUnderTheSupervisor) {
  auto s = spec({});
  s.program = "/bin/sh";
  s.args = {"-c", "cat /proc/$PPID/comm"};
  auto r = run(std::move(s));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"takosumi-superv"}));  // comm: 15 characters
}

TEST_F(SupervisedLauncherTest, TheLockIsHeldWhileTheProgramRunsAndFreedAfter) {
  auto lock_is_free = [&] { return !is_file_locked(lock_); };
  bool held_while_running = false;
  auto r = run(spec({"exit-on-sigint"}), [&](std::string_view l) {
    if (l != "ready") return;
    held_while_running = !lock_is_free();
    cancel_.request();
  });
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(held_while_running);
  EXPECT_TRUE(lock_is_free());
}

TEST_F(SupervisedLauncherTest, ALockHeldElsewhereStartsNothingAndExits125) {
  std::optional<FileLock> held;
  if (auto taken = FileLock::try_acquire(lock_)) held.emplace(std::move(*taken));
  ASSERT_TRUE(held);
  auto r = run(spec({"lines", "1", "0"}));
  held.reset();
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 125);
  EXPECT_TRUE(seen_.out.empty());
  ASSERT_EQ(seen_.err.size(), 1u);
  EXPECT_NE(seen_.err[0].find("is held by another supervisor"), std::string::npos) << seen_.err[0];
}

TEST_F(SupervisedLauncherTest, AMissingSupervisorIsAnError) {
  auto s = spec({"lines", "1", "0"});
  s.supervisor->program = dir_.path() / "no-such-supervisor";
  auto r = run(std::move(s));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "sandbox_failed");
}

TEST(LineSplitter, SplitsAcrossChunksAndBoundsLength) {
  std::vector<std::string> lines;
  redaction::LineSplitter split(4, [&](std::string_view l) { lines.emplace_back(l); });
  split.feed("ab");
  split.feed("c\r\nabcd");
  split.feed("\nabcdef\n\nxy");
  split.finish();
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "abcd", "abcd", "ef", "", "xy"}));
}

}  // namespace
}  // namespace takosumi::runner
