#include "confine/command_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/raw_write.hpp"
#include "common/unique_fd.hpp"
#include "confine/command_frames.hpp"
#include "confine/confine.hpp"

namespace takosumi::confine {
namespace {

int say_failed(const std::string& message) {
  std::fprintf(stderr, "%s%s\n", kConfineErrorPrefix.data(), message.c_str());
  return kConfineFailed;
}

// Also used in the child between fork and exec (common/raw_write.hpp).
bool write_all(int fd, const char* data, std::size_t size) noexcept { return raw_write_all(fd, data, size); }

// 0 at a clean end of file before the first byte, -1 on an error or a short read.
int read_exact(int fd, char* data, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, data + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return got == 0 ? 0 : -1;
    got += static_cast<std::size_t>(n);
  }
  return 1;
}

class Server {
 public:
  explicit Server(std::uint64_t cpu_seconds) : cpu_seconds_(cpu_seconds) {}
  int run();

 private:
  bool setup();
  bool send(FrameType type, const char* data, std::size_t size);
  int next_request(CommandRequest& request);
  void run_command(const CommandRequest& request);
  void relay(UniqueFd& from, FrameType type);
  void end_everything_else();

  sigset_t original_mask_{};
  UniqueFd children_;  // signalfd for SIGCHLD
  UniqueFd null_;
  std::uint64_t cpu_seconds_ = 0;
  bool agent_reading_ = true;  // false once a frame could not be written: the agent is gone
  std::array<char, kMaxFrameBytes> buffer_;
};

bool Server::setup() {
  if (::getpid() != 1) {
    say_failed("--serve runs only as the first process of a Run's sandbox (bubblewrap --as-pid-1)");
    return false;
  }
  ::prctl(PR_SET_DUMPABLE, 0);
  ::signal(SIGPIPE, SIG_IGN);  // a write to a gone agent fails as EPIPE instead
  sigset_t chld;
  ::sigemptyset(&chld);
  ::sigaddset(&chld, SIGCHLD);
  if (::sigprocmask(SIG_BLOCK, &chld, &original_mask_) != 0) return say_failed("sigprocmask") == 0;
  children_ = UniqueFd(::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK));
  null_ = UniqueFd(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!children_.valid() || !null_.valid()) {
    say_failed(std::string("signalfd or /dev/null: ") + std::strerror(errno));
    return false;
  }
  return true;
}

bool Server::send(FrameType type, const char* data, std::size_t size) {
  if (!agent_reading_) return false;
  const std::string header = frame_header(type, static_cast<std::uint32_t>(size));
  agent_reading_ = write_all(STDOUT_FILENO, header.data(), header.size()) &&
                   (size == 0 || write_all(STDOUT_FILENO, data, size));
  return agent_reading_;
}

// 1: a request; 0: the end of stdin; kConfineFailed (after saying why): a malformed one.
int Server::next_request(CommandRequest& request) {
  unsigned char prefix[4];
  const int got = read_exact(STDIN_FILENO, reinterpret_cast<char*>(prefix), sizeof prefix);
  if (got == 0) return 0;
  if (got < 0) return say_failed("a request was cut short");
  const std::uint32_t length = read_u32(prefix);
  if (length > kMaxRequestBytes) return say_failed("a request is larger than the limit");
  std::string payload(length, '\0');
  if (read_exact(STDIN_FILENO, payload.data(), payload.size()) != 1)
    return say_failed("a request was cut short");
  auto decoded = decode_request(payload);
  if (!decoded) return say_failed(decoded.error());
  request = std::move(*decoded);
  return 1;
}

void Server::relay(UniqueFd& from, FrameType type) {
  const ssize_t n = ::read(from.get(), buffer_.data(), buffer_.size());
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    from.reset();
    return;
  }
  (void)send(type, buffer_.data(), static_cast<std::size_t>(n));  // read on even when the agent is gone
}

// Everything but this process in the pid namespace: SIGKILL, then reaped (as pid 1 every orphan
// is its child). Nothing of the command runs once this returns.
void Server::end_everything_else() {
  ::kill(-1, SIGKILL);
  for (;;) {
    const pid_t pid = ::waitpid(-1, nullptr, 0);
    if (pid > 0 || (pid < 0 && errno == EINTR)) continue;
    break;  // ECHILD: none left
  }
}

void Server::run_command(const CommandRequest& request) {
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  const bool piped = ::pipe2(out, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0;
  UniqueFd out_read(out[0]), out_write(out[1]), err_read(err[0]), err_write(err[1]);
  if (!piped) {
    const std::string why = std::string(kConfineErrorPrefix) + "pipe: " + std::strerror(errno) + "\n";
    send(FrameType::kStderr, why.data(), why.size());
    const std::string end = exit_payload(false, kConfineFailed);
    send(FrameType::kExit, end.data(), end.size());
    return;
  }
  // Everything the child needs, made before fork: it allocates nothing.
  std::vector<char*> argv, envp;
  for (const auto& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string exec_failed = std::string(kConfineErrorPrefix) + "exec " + request.argv.front() + ": ";
  const std::string chdir_failed = std::string(kConfineErrorPrefix) + "chdir " + request.cwd + ": ";
  const pid_t child = ::fork();
  if (child == 0) {
    ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    // limits.cpuSeconds is per command, as it was per process: never the server's whole Run.
    if (cpu_seconds_ > 0) {
      const struct rlimit cpu{static_cast<rlim_t>(cpu_seconds_), static_cast<rlim_t>(cpu_seconds_)};
      if (::setrlimit(RLIMIT_CPU, &cpu) != 0) ::_exit(kConfineFailed);
    }
    if (::dup2(null_.get(), STDIN_FILENO) < 0 || ::dup2(out_write.get(), STDOUT_FILENO) < 0 ||
        ::dup2(err_write.get(), STDERR_FILENO) < 0)
      ::_exit(kConfineFailed);
    const std::string* failed = &chdir_failed;
    if (::chdir(request.cwd.c_str()) == 0) {
      failed = &exec_failed;
      ::execve(argv[0], argv.data(), envp.data());
    }
    const char* reason = ::strerrordesc_np(errno);
    write_all(STDERR_FILENO, failed->data(), failed->size());
    write_all(STDERR_FILENO, reason ? reason : "unknown error", std::strlen(reason ? reason : "unknown error"));
    write_all(STDERR_FILENO, "\n", 1);
    ::_exit(kConfineExecFailed);
  }
  out_write.reset();
  err_write.reset();
  int status = 0;
  if (child < 0) {
    const std::string why = std::string(kConfineErrorPrefix) + "fork: " + std::strerror(errno) + "\n";
    send(FrameType::kStderr, why.data(), why.size());
    status = kConfineFailed << 8;
  } else {
    const FrameType stdout_type = request.capture ? FrameType::kCapture : FrameType::kStdout;
    for (bool ended = false; !ended;) {
      std::array<pollfd, 3> fds{{{children_.get(), POLLIN, 0},
                                 {out_read.get(), POLLIN, 0},
                                 {err_read.get(), POLLIN, 0}}};
      ::poll(fds.data(), fds.size(), -1);
      if (fds[1].revents) relay(out_read, stdout_type);
      if (fds[2].revents) relay(err_read, FrameType::kStderr);
      if (!fds[0].revents) continue;
      signalfd_siginfo info;
      while (::read(children_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      }
      // Orphans are reaped here too: only the command's own status is kept.
      int reaped = 0;
      for (pid_t pid; (pid = ::waitpid(-1, &reaped, WNOHANG)) > 0;)
        if (pid == child) {
          status = reaped;
          ended = true;
        }
    }
    // What the command left running dies now; then its pipes hold all it wrote and end.
    end_everything_else();
    while (out_read.valid() || err_read.valid()) {
      std::array<pollfd, 2> fds{{{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}}};
      if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
      if (fds[0].revents) relay(out_read, stdout_type);
      if (fds[1].revents) relay(err_read, FrameType::kStderr);
    }
  }
  const std::string end = WIFSIGNALED(status) ? exit_payload(true, WTERMSIG(status))
                                              : exit_payload(false, WEXITSTATUS(status));
  send(FrameType::kExit, end.data(), end.size());
}

int Server::run() {
  if (!setup()) return kConfineFailed;
  if (!send(FrameType::kReady, nullptr, 0)) return 0;
  for (;;) {
    CommandRequest request;
    const int got = next_request(request);
    if (got != 1) return got;
    run_command(request);
    if (!agent_reading_) return 0;
  }
}

}  // namespace

int serve_commands(std::uint64_t cpu_seconds) {
  Server server(cpu_seconds);
  return server.run();
}

}  // namespace takosumi::confine
