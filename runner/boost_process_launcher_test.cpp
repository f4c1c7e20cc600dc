#include "runner/boost_process_launcher.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "runner/line_splitter.hpp"
#include "runner/test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

using namespace std::chrono_literals;
using testing::run_to_end;
using takosumi::testing::TempDir;

struct Captured {
  std::vector<std::string> out;
  std::vector<std::string> err;
};

class LauncherTest : public ::testing::Test {
 protected:
  ProcessSpec spec(std::vector<std::string> args) {
    ProcessSpec s;
    s.program = TAKOSUMI_TEST_MISBEHAVE;
    s.args = std::move(args);
    s.env = {"PATH=/usr/bin:/bin", "ONLY_THIS=1"};
    s.cwd = dir_.path();
    s.timeout = 60s;
    s.kill_grace = 200ms;
    return s;
  }
  Result<ProcessExit> run(ProcessSpec s, std::function<void(std::string_view)> on_out = nullptr) {
    LineSink sink = [&](OutputStream stream, std::string_view line) {
      (stream == OutputStream::out ? seen_.out : seen_.err).emplace_back(line);
      if (stream == OutputStream::out && on_out) on_out(line);
    };
    return run_to_end(io_, launcher_.async_run(std::move(s), sink, cancel_));
  }

  boost::asio::io_context io_;
  BoostProcessLauncher launcher_;
  CancelSignal cancel_;
  Captured seen_;
  TempDir dir_;
};

TEST_F(LauncherTest, StreamsLinesAndReportsExitCode) {
  auto r = run(spec({"lines", "3", "7"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_FALSE(r->cancelled);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"line 0", "line 1", "line 2"}));
  EXPECT_EQ(seen_.err, (std::vector<std::string>{"err"}));
}

TEST_F(LauncherTest, EnvironmentIsExactlyTheGivenOne) {
  auto r = run(spec({"env"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"PATH=/usr/bin:/bin", "ONLY_THIS=1"}));
}

TEST_F(LauncherTest, RunsInTheGivenDirectory) {
  auto r = run(spec({"pwd"}));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(seen_.out.size(), 1u);
  EXPECT_EQ(std::filesystem::path(seen_.out[0]), std::filesystem::canonical(dir_.path()));
}

TEST_F(LauncherTest, LongLinesArriveInBoundedPieces) {
  auto r = run(spec({"long", std::to_string(150 * 1024)}));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(seen_.out.size(), 4u);
  EXPECT_EQ(seen_.out[0].size(), 64u * 1024);
  EXPECT_EQ(seen_.out[1].size(), 64u * 1024);
  EXPECT_EQ(seen_.out[2].size(), 22u * 1024);
  EXPECT_EQ(seen_.out[3], "end");
}

TEST_F(LauncherTest, StdoutCanGoToAFileInstead) {
  auto s = spec({"lines", "2", "0"});
  s.stdout_file = dir_.path() / "out.txt";
  auto r = run(std::move(s));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(seen_.out.empty());
  EXPECT_EQ(seen_.err, (std::vector<std::string>{"err"}));
  EXPECT_EQ(std::filesystem::file_size(dir_.path() / "out.txt"), std::string("line 0\nline 1\n").size());
}

TEST_F(LauncherTest, CancelInterruptsAChildThatExitsOnSigint) {
  auto r = run(spec({"exit-on-sigint"}), [&](std::string_view l) {
    if (l == "ready") cancel_.request();
  });
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, 42);
  EXPECT_EQ(r->term_signal, 0);
}

TEST_F(LauncherTest, CancelKillsAChildThatIgnoresSigint) {
  auto r = run(spec({"ignore-sigint"}), [&](std::string_view l) {
    if (l == "ready") cancel_.request();
  });
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->term_signal, SIGKILL);
}

TEST_F(LauncherTest, CancelBeforeStartStopsTheChildAtOnce) {
  cancel_.request();
  auto r = run(spec({"sleep"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_NE(r->exit_code, 0);
}

TEST_F(LauncherTest, WallClockLimitInterruptsAsTimedOut) {
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

TEST_F(LauncherTest, LeftoversOfTheProcessGroupAreKilledAfterExit) {
  auto r = run(spec({"orphan"}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 0);
  ASSERT_EQ(seen_.out.size(), 1u);
  const int grandchild = std::stoi(seen_.out[0].substr(std::string("grandchild ").size()));
  for (int i = 0; i < 100 && !gone_or_zombie(grandchild); ++i) ::usleep(10'000);
  EXPECT_TRUE(gone_or_zombie(grandchild));
}

TEST_F(LauncherTest, ResourceLimitsApplyToTheChildAndCoreDumpsAreOff) {
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
TEST_F(LauncherTest, GroupInterruptReachesTheProgramInsideAWrapper) {
  auto s = spec({});
  s.program = "/bin/sh";
  s.args = {"-c", std::string(TAKOSUMI_TEST_MISBEHAVE) + " exit-on-sigint; echo wrapper-exit=$?"};
  s.interrupt_group = true;
  auto r = run(std::move(s), [&](std::string_view l) {
    if (l == "ready") cancel_.request();
  });
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->exit_code, 0) << "the wrapper itself ignored the interrupt";
  EXPECT_EQ(seen_.out, (std::vector<std::string>{"ready", "wrapper-exit=42"}));
}

TEST_F(LauncherTest, MissingProgramIsAnError) {
  auto s = spec({});
  s.program = dir_.path() / "no-such-program";
  auto r = run(std::move(s));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "sandbox_failed");
}

TEST(LineSplitter, SplitsAcrossChunksAndBoundsLength) {
  std::vector<std::string> lines;
  LineSplitter split(4, [&](std::string_view l) { lines.emplace_back(l); });
  split.feed("ab");
  split.feed("c\r\nabcd");
  split.feed("\nabcdef\n\nxy");
  split.finish();
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "abcd", "abcd", "ef", "", "xy"}));
}

}  // namespace
}  // namespace takosumi::runner
