// takosumi-supervise with real processes and real signals. The test process is a child
// subreaper, so a supervisor orphaned by its stand-in agent is reparented to it (its parent
// changes, as when the real agent dies and init adopts it) and its exit can be waited for.
#include "supervise/supervise_arguments.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::supervise {
namespace {

using namespace std::chrono_literals;
using takosumi::testing::TempDir;

const std::string kSupervise = test_paths::supervise;
const std::string kMisbehave = test_paths::misbehave;
constexpr auto kPatience = 30s;  // generous: only a failure ever waits this long

// ---- command line -------------------------------------------------------------------------

TEST(SuperviseArguments, FormatAndParseAgree) {
  SuperviseArguments a;
  a.grace = 1500ms;
  a.interrupt_group = true;
  a.lock_file = "/work/ws/tofu.lock";
  a.command = {"/usr/bin/bwrap", "--die-with-parent", "--", "/bin/tofu", "apply"};
  const auto argv = format_supervise_arguments(a);
  EXPECT_EQ(argv, (std::vector<std::string>{"--grace-ms", "1500", "--interrupt-group", "--lock",
                                            "/work/ws/tofu.lock", "--", "/usr/bin/bwrap",
                                            "--die-with-parent", "--", "/bin/tofu", "apply"}));
  auto parsed = parse_supervise_arguments(argv);
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->grace, a.grace);
  EXPECT_TRUE(parsed->interrupt_group);
  EXPECT_EQ(parsed->lock_file, a.lock_file);
  EXPECT_EQ(parsed->command, a.command);
}

TEST(SuperviseArguments, OptionalPartsMayBeLeftOut) {
  auto parsed = parse_supervise_arguments({"--grace-ms", "0", "--", "/bin/true"});
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->grace, 0ms);
  EXPECT_FALSE(parsed->interrupt_group);
  EXPECT_FALSE(parsed->lock_file);
  EXPECT_EQ(parsed->command, std::vector<std::string>{"/bin/true"});
}

TEST(SuperviseArguments, MalformedCommandLinesAreRefused) {
  const std::vector<std::vector<std::string>> bad{
      {},
      {"--", "/bin/true"},                                   // no grace
      {"--grace-ms", "10", "/bin/true"},                     // no "--"
      {"--grace-ms", "10", "--"},                            // no command
      {"--grace-ms", "10", "--", "true"},                    // relative program
      {"--grace-ms", "-1", "--", "/bin/true"},
      {"--grace-ms", "10ms", "--", "/bin/true"},
      {"--grace-ms", "", "--", "/bin/true"},
      {"--grace-ms", "99999999999", "--", "/bin/true"},
      {"--grace-ms", "1", "--grace-ms", "2", "--", "/bin/true"},
      {"--grace-ms", "1", "--lock", "", "--", "/bin/true"},
      {"--grace-ms", "1", "--lock"},
      {"--grace-ms", "1", "--verbose", "--", "/bin/true"},
  };
  for (const auto& argv : bad) {
    std::string shown;
    for (const auto& a : argv) shown += "[" + a + "]";
    EXPECT_FALSE(parse_supervise_arguments(argv)) << shown;
  }
}

// ---- processes ----------------------------------------------------------------------------

// A process started by the test in a new session, as the launcher starts the supervisor, with
// stdout and stderr piped to the test.
struct Spawned {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
};

Spawned spawn(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    ::setsid();
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  return {pid, out[0], err[0]};
}

// Reads fd until text contains `want` (or to its end when want is empty), EOF or the patience
// runs out; returns what was read.
std::string read_until(int fd, const std::string& want = {}) {
  std::string text;
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (want.empty() || text.find(want) == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (std::chrono::steady_clock::now() >= until || ::poll(&p, 1, 100) < 0) break;
    if (p.revents == 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

bool eventually(const std::function<bool()>& condition) {
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// The wait status of a child of the test (an adopted orphan included), once it has ended.
std::optional<int> wait_exit(pid_t pid) {
  std::optional<int> status;
  eventually([&] {
    int s = 0;
    if (::waitpid(pid, &s, WNOHANG) == pid) status = s;
    return status.has_value();
  });
  return status;
}

bool lock_is_free(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

bool gone_or_zombie(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  if (!(stat >> pid_field >> comm >> state)) return true;
  return state == "Z" || state == "X";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

pid_t read_pid(const std::filesystem::path& path) {
  std::optional<pid_t> pid;
  eventually([&] {
    const auto text = read_text(path);
    if (!text.empty() && text.back() == '\n') pid = std::stoi(text);
    return pid.has_value();
  });
  return pid.value_or(-1);
}

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0); }
  void TearDown() override {
    for (pid_t group : groups_) ::kill(-group, SIGKILL);
    for (pid_t pid : helpers_) ::kill(pid, SIGKILL);
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    for (int fd : fds_) ::close(fd);
  }

  std::vector<std::string> supervise(std::vector<std::string> options,
                                     std::vector<std::string> command) {
    std::vector<std::string> argv{kSupervise};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.emplace_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  // Started by the test itself: the agent stays alive.
  Spawned start(std::vector<std::string> argv) {
    auto s = spawn(argv);
    groups_.push_back(s.pid);
    fds_.insert(fds_.end(), {s.out, s.err});
    return s;
  }
  // Started by a stand-in agent that the test can kill; returns the supervisor's pid.
  pid_t start_under_agent(std::vector<std::string> argv) {
    argv.insert(argv.begin(), {kMisbehave, "parent"});
    auto agent = spawn(argv);
    helpers_.push_back(agent.pid);
    fds_.insert(fds_.end(), {agent.out, agent.err});
    const auto line = read_until(agent.out, "\n");
    if (!line.starts_with("child ")) return -1;
    const pid_t pid = std::stoi(line.substr(6));
    groups_.push_back(pid);
    agent_ = agent.pid;
    return pid;
  }
  void kill_agent() {
    ::kill(agent_, SIGKILL);
    ::waitpid(agent_, nullptr, 0);
  }
  bool exists(const std::string& name) const { return std::filesystem::exists(dir_ / name); }

  TempDir dir_;
  std::filesystem::path lock_ = dir_ / "tofu.lock";
  pid_t agent_ = -1;
  std::vector<pid_t> groups_;
  std::vector<pid_t> helpers_;
  std::vector<int> fds_;
};

// The command as the launcher runs tofu, with a leftover that nobody waits for: tofu itself
// (exec'd), or in interrupt_group mode tofu inside a wrapper that keeps SIGINT ignored like
// bubblewrap. The program handles SIGINT even when it was started with it ignored, as Go does.
std::vector<std::string> tofu_like(const std::filesystem::path& dir, bool group) {
  const std::string program = kMisbehave + " interruptible " + dir.string();
  return {"/bin/sh", "-c",
          "/bin/sleep 1000 & echo $! > " + (dir / "leftover").string() + "; " +
              (group ? program + "; echo wrapper-exit=$?" : "exec " + program)};
}

// SIGINT is ignored by the process (from /proc/<pid>/status).
bool ignores_sigint(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("SigIgn:"))
      return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
  return false;
}

class AgentDeath : public SupervisorTest, public ::testing::WithParamInterface<bool> {
 protected:
  // The tofu-like command under the supervisor (holding the lock, interrupting its group when the
  // parameter says so) under a stand-in agent.
  pid_t start_supervised() {
    std::vector<std::string> options{"--grace-ms", "20000", "--lock", lock_.string()};
    if (GetParam()) options.emplace_back("--interrupt-group");
    return start_under_agent(supervise(options, tofu_like(dir_.path(), GetParam())));
  }
};

TEST_P(AgentDeath, InterruptsTheCommandWhichFinishesAndTheLockIsFreed) {
  const pid_t supervisor = start_supervised();
  ASSERT_GT(supervisor, 0);
  ASSERT_TRUE(eventually([&] { return exists("ready"); }));
  EXPECT_FALSE(lock_is_free(lock_));

  kill_agent();
  const auto status = wait_exit(supervisor);
  ASSERT_TRUE(status) << "the supervisor did not finish";
  // Its last act, with nobody left to kill the leftovers: SIGKILL to its own group.
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << *status;
  // Interrupted, it kept writing to stdout after the agent was gone and still finished well.
  EXPECT_EQ(read_text(dir_ / "interrupted"), "interrupted 1\n");
  EXPECT_TRUE(lock_is_free(lock_));
  const pid_t leftover = read_pid(dir_ / "leftover");
  EXPECT_TRUE(eventually([&] { return gone_or_zombie(leftover); }));
}

// The launcher's cancel, then the agent dies during the grace: the command must not get a second
// interrupt (tofu would give up at once, without persisting its state).
TEST_P(AgentDeath, AfterACancelDoesNotInterruptAgain) {
  const pid_t supervisor = start_supervised();
  ASSERT_GT(supervisor, 0);
  ASSERT_TRUE(eventually([&] { return exists("ready"); }));

  ::kill(GetParam() ? -supervisor : supervisor, SIGINT);  // as the launcher cancels
  kill_agent();
  ASSERT_TRUE(wait_exit(supervisor)) << "the supervisor did not finish";
  EXPECT_EQ(read_text(dir_ / "interrupted"), "interrupted 1\n");
  EXPECT_TRUE(lock_is_free(lock_));
}

INSTANTIATE_TEST_SUITE_P(Supervise, AgentDeath, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Group" : "Child"; });

TEST_F(SupervisorTest, AgentDeathKillsACommandThatIgnoresTheInterruptAfterTheGrace) {
  const pid_t supervisor = start_under_agent(supervise(
      {"--grace-ms", "300", "--lock", lock_.string()},
      {"/bin/sh", "-c", "echo $$ > " + (dir_ / "pid").string() + "; exec " + kMisbehave +
                            " ignore-sigint"}));
  ASSERT_GT(supervisor, 0);
  const pid_t command = read_pid(dir_ / "pid");
  // exec'd into the program, which has set SIGINT to ignored.
  ASSERT_TRUE(eventually([&] { return ignores_sigint(command); }));
  EXPECT_FALSE(lock_is_free(lock_));

  kill_agent();
  ASSERT_TRUE(wait_exit(supervisor)) << "the supervisor did not finish";
  EXPECT_TRUE(gone_or_zombie(command));
  EXPECT_TRUE(lock_is_free(lock_));
}

TEST_F(SupervisorTest, SigtermInterruptsTheCommandAndPassesItsExitOn) {
  auto s = start(supervise({"--grace-ms", "20000"}, {kMisbehave, "interruptible", dir_.path()}));
  ASSERT_NE(read_until(s.out, "ready\n").find("ready\n"), std::string::npos);
  ::kill(s.pid, SIGTERM);
  const auto status = wait_exit(s.pid);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  EXPECT_EQ(read_text(dir_ / "interrupted"), "interrupted 1\n");
}

TEST_F(SupervisorTest, SigtermKillsACommandThatIgnoresTheInterruptAfterTheGrace) {
  auto s = start(supervise({"--grace-ms", "300", "--lock", lock_.string()},
                           {kMisbehave, "ignore-sigint"}));
  ASSERT_NE(read_until(s.out, "ready\n").find("ready\n"), std::string::npos);
  ::kill(s.pid, SIGTERM);
  const auto status = wait_exit(s.pid);
  ASSERT_TRUE(status);
  // The agent is alive: the supervisor dies of the command's signal, for the launcher to see.
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << *status;
  EXPECT_TRUE(lock_is_free(lock_));
}

TEST_F(SupervisorTest, ASecondSupervisorOnAHeldLockRunsNothingAndExits125) {
  auto first = start(supervise({"--grace-ms", "100", "--lock", lock_.string()},
                               {kMisbehave, "sleep"}));
  ASSERT_NE(read_until(first.out, "ready\n").find("ready\n"), std::string::npos);
  auto second = start(supervise({"--grace-ms", "100", "--lock", lock_.string()},
                                {kMisbehave, "lines", "1", "0"}));
  const auto status = wait_exit(second.pid);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 125) << *status;
  EXPECT_EQ(read_until(second.out), "");
  EXPECT_NE(read_until(second.err).find("lock " + lock_.string() + " is held"),
            std::string::npos);
  EXPECT_EQ(::waitpid(first.pid, nullptr, WNOHANG), 0) << "the first one is undisturbed";
}

TEST_F(SupervisorTest, TheCommandDoesNotInheritTheLock) {
  auto s = start(supervise({"--grace-ms", "100", "--lock", lock_.string()},
                           {"/bin/sh", "-c", "echo $$; exec " + kMisbehave + " sleep"}));
  const auto out = read_until(s.out, "ready\n");
  ASSERT_NE(out.find("ready\n"), std::string::npos) << out;
  const pid_t command = std::stoi(out);
  const auto fds = "/proc/" + std::to_string(command) + "/fd";
  for (const auto& fd : std::filesystem::directory_iterator(fds)) {
    std::error_code ec;
    EXPECT_NE(std::filesystem::read_symlink(fd.path(), ec), lock_) << fd.path();
  }
  // The lock belongs to the supervisor alone: it is free once the supervisor is gone, while the
  // command still runs.
  ::kill(s.pid, SIGKILL);
  ASSERT_TRUE(wait_exit(s.pid));
  EXPECT_TRUE(lock_is_free(lock_));
  EXPECT_FALSE(gone_or_zombie(command));
}

TEST_F(SupervisorTest, AProgramThatCannotBeExecutedExits127) {
  auto s = start(supervise({"--grace-ms", "100"}, {(dir_ / "missing").string()}));
  const auto status = wait_exit(s.pid);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 127) << *status;
  EXPECT_NE(read_until(s.err).find("exec " + (dir_ / "missing").string()), std::string::npos);
}

TEST_F(SupervisorTest, ABadCommandLineExits125) {
  auto s = start({kSupervise, "--grace-ms", "100", "--", "sh"});
  const auto status = wait_exit(s.pid);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 125) << *status;
  EXPECT_NE(read_until(s.err).find("usage:"), std::string::npos);
}

}  // namespace
}  // namespace takosumi::supervise
