#include "git/remote_helper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/error_codes.hpp"
#include "common/unique_fd.hpp"

namespace takosumi::git {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How often a wait looks at `cancelled` when nothing else wakes it.
constexpr auto kCancelCheck = std::chrono::milliseconds(200);

std::unexpected<Error> unavailable(const std::string& what) {
  return fail(errc::kUnavailable, "the Git helper: " + what);
}

struct Pipe {
  UniqueFd read, write;
};

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return unavailable(std::string("pipe: ") + std::strerror(errno));
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The request goes over a socket, not a pipe: send(MSG_NOSIGNAL) to a helper that died is an
// EPIPE, not a SIGPIPE that would end this process.
Result<Pipe> make_request_channel() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return unavailable(std::string("socketpair: ") + std::strerror(errno));
  ::shutdown(fds[0], SHUT_WR);
  ::shutdown(fds[1], SHUT_RD);
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The helper's whole environment. HOME: libgit2 1.5.1 fails an ssh connection without it (it reads
// $HOME/.ssh/known_hosts first); one that does not exist leaves every host-key decision to the
// request's SSH_KNOWN_HOSTS. A sanitizer build also hands on the sanitizers' own settings, so the
// helper reports (and suppresses) what the tests that started it asked for: without them, a leak
// in a third-party library or LeakSanitizer under strace ends the helper with status 1. Leak
// stacks are unwound slowly: libgit2 has no frame pointers, and a suppression (scripts/lsan.supp)
// can then name the libgit2 function that leaks rather than the whole library.
std::vector<std::string> helper_environment() {
  std::vector<std::string> env{"HOME=/nonexistent"};
#if defined(__SANITIZE_ADDRESS__)
  const char* asan = std::getenv("ASAN_OPTIONS");
  env.push_back(std::string("ASAN_OPTIONS=") + (asan ? std::string(asan) + ":" : "") +
                "fast_unwind_on_malloc=0");
  for (const char* name : {"LSAN_OPTIONS", "UBSAN_OPTIONS"})
    if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
#endif
  return env;
}

// The helper in a process group of its own, with stdin and stdout on the pipes, stderr on
// /dev/null, no other descriptor and nothing else of this process's environment.
Result<pid_t> spawn(const fs::path& program, int in, int out) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::string path = program.string();
  std::string command(kHelperCommand);
  char* argv[] = {path.data(), command.data(), nullptr};
  std::vector<std::string> env = helper_environment();
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return unavailable("start " + path + ": " + std::strerror(rc));
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return status;
}

// Kills the helper's process group unless it has exited, and reaps it.
struct Reaper {
  pid_t pid;
  bool reaped = false;
  ~Reaper() {
    if (reaped) return;
    ::kill(-pid, SIGKILL);
    wait_for(pid);
  }
};

}  // namespace

Result<HelperOutcome> run_git_helper(const fs::path& program, const RemoteRequest& request,
                                     Clock::time_point deadline, const std::function<bool()>& cancelled) {
  const SecretBytes input = serialize_remote_request(request);
  auto in = make_request_channel();
  if (!in) return std::unexpected(in.error());
  auto out = make_pipe();
  if (!out) return std::unexpected(out.error());
  auto pid = spawn(program, in->read.get(), out->write.get());
  if (!pid) return std::unexpected(pid.error());
  Reaper reaper{*pid};
  in->read.reset();
  out->write.reset();
  std::size_t written = 0;
  std::string answer;
  HelperOutcome outcome;
  for (;;) {
    if (cancelled && cancelled()) {
      outcome.cancelled = true;
      return outcome;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      outcome.timed_out = true;
      return outcome;
    }
    pollfd fds[2] = {{out->read.get(), POLLIN, 0}, {in->write.get(), POLLOUT, 0}};
    const nfds_t count = in->write.valid() ? 2 : 1;
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (cancelled) wait = std::min<std::chrono::milliseconds>(wait, kCancelCheck);
    const int ready = ::poll(fds, count, static_cast<int>(std::max<long long>(wait.count(), 1)));
    if (ready < 0 && errno != EINTR) return unavailable(std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) continue;
    if (count == 2 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const auto rest = input.span().subspan(written);
      const ssize_t n = ::send(in->write.get(), rest.data(), rest.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) written += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) in->write.reset();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[65536];
      const ssize_t n = ::read(out->read.get(), buffer, sizeof buffer);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) return unavailable(std::string("read: ") + std::strerror(errno));
      if (n == 0) break;
      answer.append(buffer, static_cast<std::size_t>(n));
      if (answer.size() > kMaxRemoteResultBytes) return unavailable("it answered more than 32 MiB");
    }
  }
  const int status = wait_for(*pid);
  reaper.reaped = true;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return unavailable("it ended with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  auto result = parse_remote_result(answer);
  if (!result) return unavailable(result.error().message);
  outcome.result = std::move(*result);
  return outcome;
}

}  // namespace takosumi::git
