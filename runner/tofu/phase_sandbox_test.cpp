// One sandbox for a Run phase (PhaseSandbox and takosumi-confine --serve), with the real
// bubblewrap, supervisor and confine: commands share the sandbox, nothing of one meets the next,
// each keeps its exit, capture and stop ladder, and nothing is left once the phase is closed.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "common/file_io.hpp"
#include "common/file_lock.hpp"
#include "runner/tofu/phase_sandbox.hpp"
#include "runner/tofu/sandbox.hpp"
#include "tests/support/run_to_end.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Output {
  std::string out;
  std::string err;
  OutputSink sink() {
    return [this](OutputStream stream, std::string_view bytes) {
      (stream == OutputStream::err ? err : out).append(bytes);
    };
  }
};

// Whether any process of this host has marker in its command line.
bool host_runs(const std::string& marker) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(marker) != std::string::npos) return true;
  }
  return false;
}

class PhaseSandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SandboxOptions sandbox;
    confine::ConfineArguments confine;
    confine.exec = {"/usr/bin", "/bin"};
    confine.loader = true;
    confine.landlock_required = false;  // the policy itself is confine's suite; here: the phase
    confine.serve = true;
    sandbox.confine = SandboxOptions::Confine{test_paths::confine, confine};
    ProcessSpec session;
    session.env = {"PATH=/usr/bin:/bin"};
    session.cwd = ws_.path();
    session.kill_grace = 500ms;
    ASSERT_TRUE(wrap_in_sandbox(sandbox, ws_.path(), session));
    session.supervisor = SupervisorSpec{test_paths::supervise, ws_.path() / "lock"};
    phase_.emplace(std::move(session));
  }

  ProcessSpec command(const std::string& script) const {
    ProcessSpec spec;
    spec.program = "/bin/sh";
    spec.args = {"-c", script};
    spec.env = {"PATH=/usr/bin:/bin", "WHO=second"};
    spec.cwd = ws_.path();
    spec.timeout = 60s;
    spec.kill_grace = 500ms;
    return spec;
  }

  ProcessExit run(ProcessSpec spec, Output& output) {
    auto exit = testing::run_to_end(io_, phase_->async_run(std::move(spec), output.sink(), cancel_));
    EXPECT_TRUE(exit) << exit.error().to_string();
    return exit ? *exit : ProcessExit{};
  }

  void prestart() {
    auto started = testing::run_to_end(io_, phase_->async_prestart());
    ASSERT_TRUE(started) << started.error().to_string();
  }

  void close() {
    testing::run_to_end(io_, [this]() -> boost::asio::awaitable<int> {
      co_await phase_->async_close();
      co_return 0;
    }());
  }

  testing::TempDir ws_;
  boost::asio::io_context io_;
  CancelSignal cancel_;
  std::optional<PhaseSandbox> phase_;
};

TEST_F(PhaseSandboxTest, CommandsShareOneSandboxAndNothingOfOneRunsIntoTheNext) {
  Output first;
  const auto one = run(command("echo $$ > /tmp/first; setsid sh -c 'sleep 1000' & echo started"), first);
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_EQ(first.out, "started\n");
  EXPECT_TRUE(phase_->running());
  // The same sandbox: its private /tmp still holds what the first command wrote. Its own
  // environment: not the first command's. Nothing but the server (pid 1) and this shell runs.
  Output second;
  const auto two = run(command("cat /tmp/first >/dev/null && echo same-tmp; echo $WHO; "
                               "for p in /proc/[0-9]*; do n=${p#/proc/}; "
                               "[ \"$n\" = 1 ] || [ \"$n\" = $$ ] || { read -r c < $p/comm; echo \"left: $n $c\"; }; done"),
                       second);
  EXPECT_EQ(two.exit_code, 0);
  EXPECT_EQ(second.out, "same-tmp\nsecond\n") << second.err;
  close();
  EXPECT_FALSE(phase_->running());
}

TEST_F(PhaseSandboxTest, EachCommandKeepsItsExitCodeSignalAndCapture) {
  Output out;
  EXPECT_EQ(run(command("exit 7"), out).exit_code, 7);
  // Orphans reaped in the same pass as the command never lend it their status.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(run(command("(exit 0) & (exit 0) & exit 3"), out).exit_code, 3);
  const auto killed = run(command("kill -TERM $$"), out);
  EXPECT_EQ(killed.exit_code, -1);
  EXPECT_EQ(killed.term_signal, SIGTERM);
  auto spec = command("echo kept-out-of-the-log; echo said >&2");
  spec.stdout_file = ws_.path() / "captured.json";
  Output captured;
  EXPECT_EQ(run(std::move(spec), captured).exit_code, 0);
  EXPECT_EQ(captured.out, "") << "a capture never reaches the sink";
  EXPECT_EQ(captured.err, "said\n");
  auto text = read_file(ws_.path() / "captured.json", 1024);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "kept-out-of-the-log\n");
  EXPECT_EQ(fs::status(ws_.path() / "captured.json").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  // The session is still serving after all of these.
  EXPECT_EQ(run(command("exit 0"), out).exit_code, 0);
  close();
}

TEST_F(PhaseSandboxTest, AProgramThatCannotStartIsTheConfineErrorAndTheSessionGoesOn) {
  Output out;
  auto spec = command("");
  spec.program = "/nonexistent/tofu";
  spec.args = {};
  const auto exit = run(std::move(spec), out);
  EXPECT_EQ(exit.exit_code, 127);
  EXPECT_TRUE(is_sandbox_error_line(out.err)) << out.err;
  EXPECT_EQ(run(command("exit 3"), out).exit_code, 3);
  close();
}

TEST_F(PhaseSandboxTest, ACommandPastItsTimeEndsTheSessionAndLeavesNothing) {
  std::random_device random;
  const std::string marker = "phase-marker-" + std::to_string(random());
  Output out;
  auto spec = command("setsid sh -c 'sleep 1000; : " + marker + "' & sleep 1000");
  spec.timeout = 200ms;  // sh ignores the interrupt (started with SIGINT ignored): the ladder kills
  const auto exit = run(std::move(spec), out);
  EXPECT_TRUE(exit.timed_out);
  EXPECT_FALSE(exit.cancelled);
  EXPECT_FALSE(phase_->running());
  EXPECT_FALSE(host_runs(marker)) << "the session's namespace died with it";
  auto after = testing::run_to_end(io_, phase_->async_run(command("exit 0"), out.sink(), cancel_));
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code, errc::kSandboxFailed);
}

TEST_F(PhaseSandboxTest, ACancelInterruptsTheRunningCommand) {
  Output out;
  cancel_.request();
  const auto exit = run(command("sleep 1000"), out);
  EXPECT_TRUE(exit.cancelled);
}

TEST_F(PhaseSandboxTest, WhatACommandLeftDiesBeforeItsEndIsReportedAndClosingFreesTheLock) {
  std::random_device random;
  const std::string marker = "phase-marker-" + std::to_string(random());
  Output out;
  EXPECT_EQ(run(command("setsid sh -c 'sleep 1000; : " + marker + "' & echo ok"), out).exit_code, 0);
  EXPECT_TRUE(phase_->running());
  EXPECT_FALSE(host_runs(marker)) << "killed and reaped by the server before it reported the end";
  EXPECT_TRUE(is_file_locked(ws_.path() / "lock")) << "held while the phase's sandbox runs";
  close();
  EXPECT_FALSE(is_file_locked(ws_.path() / "lock"));
  // A command after a close (a hook ran in between) starts a new session.
  Output again;
  EXPECT_EQ(run(command("echo again"), again).exit_code, 0);
  EXPECT_EQ(again.out, "again\n");
  EXPECT_TRUE(phase_->running());
  close();
  EXPECT_FALSE(host_runs(marker));
  // The supervisor held the lock for the whole phase, and let it go at its end.
  EXPECT_FALSE(is_file_locked(ws_.path() / "lock"));
}

// A Run starts its sandbox before its checkout: what is written into the workspace meanwhile is
// what the first command sees, in the same session as the commands after it.
TEST_F(PhaseSandboxTest, APrestartedSessionServesTheFirstCommandWithWhatWasWrittenSince) {
  prestart();
  EXPECT_TRUE(phase_->running());
  EXPECT_TRUE(write_file_atomic(ws_.path() / "checked-out.tf", "written after the start\n", 0600));
  Output first;
  EXPECT_EQ(run(command("cat checked-out.tf; echo $$ > /tmp/first"), first).exit_code, 0);
  EXPECT_EQ(first.out, "written after the start\n") << first.err;
  prestart();  // a no-op while the session runs
  Output second;
  EXPECT_EQ(run(command("test -s /tmp/first && echo same-session"), second).exit_code, 0);
  EXPECT_EQ(second.out, "same-session\n") << second.err;
  close();
  EXPECT_FALSE(phase_->running());
}

// A Run that fails before its first command (a checkout refused) closes a session that never
// served: nothing of it is left and the lock is free.
TEST_F(PhaseSandboxTest, APrestartedSessionThatServedNothingClosesCompletely) {
  prestart();
  close();
  EXPECT_FALSE(phase_->running());
  EXPECT_FALSE(is_file_locked(ws_.path() / "lock"));
  Output out;
  EXPECT_EQ(run(command("echo later"), out).exit_code, 0) << "a later command starts a new session";
  EXPECT_EQ(out.out, "later\n");
  close();
}

// A sandbox that cannot start fails the first command with what bubblewrap said, whether the
// session was started ahead or by that command, and no later command runs.
TEST(PhaseSandboxStart, ASessionThatNeverBecomesReadyIsTheFirstCommandsFailure) {
  for (const bool ahead : {true, false}) {
    testing::TempDir ws;
    SandboxOptions sandbox;
    confine::ConfineArguments confine;
    confine.serve = true;
    sandbox.confine = SandboxOptions::Confine{test_paths::confine, confine};
    sandbox.read_only.push_back(ws.path() / "not-there");  // bubblewrap cannot bind it, and says so
    ProcessSpec session;
    session.env = {"PATH=/usr/bin:/bin"};
    session.cwd = ws.path();
    session.kill_grace = 500ms;
    ASSERT_TRUE(wrap_in_sandbox(sandbox, ws.path(), session));
    PhaseSandbox phase(std::move(session));
    boost::asio::io_context io;
    CancelSignal cancel;
    if (ahead) {
      ASSERT_TRUE(testing::run_to_end(io, phase.async_prestart()));
    }
    ProcessSpec spec;
    spec.program = "/bin/true";
    spec.cwd = ws.path();
    spec.timeout = 60s;
    Output out;
    auto exit = testing::run_to_end(io, phase.async_run(spec, out.sink(), cancel));
    ASSERT_TRUE(exit) << exit.error().to_string();
    EXPECT_NE(exit->exit_code, 0) << "ahead: " << ahead;
    EXPECT_TRUE(is_sandbox_error_line(out.err)) << "ahead: " << ahead << ": " << out.err;
    EXPECT_FALSE(phase.running());
    auto after = testing::run_to_end(io, phase.async_run(spec, out.sink(), cancel));
    ASSERT_FALSE(after);
    EXPECT_EQ(after.error().code, errc::kSandboxFailed);
  }
}

TEST(CommandServer, RefusesToServeOutsideTheSandboxItsPidOneOf) {
  testing::TempDir tmp;
  const std::string line = std::string(test_paths::confine) + " --landlock best-effort --serve </dev/null 2>" +
                           (tmp.path() / "err").string();
  const int status = std::system(line.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125);
  auto said = read_file(tmp.path() / "err", 4096);
  ASSERT_TRUE(said);
  EXPECT_NE(said->find("--as-pid-1"), std::string::npos) << *said;
}

}  // namespace
}  // namespace takosumi::runner
