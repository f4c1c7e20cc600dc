#include "supervise/supervise.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/raw_write.hpp"
#include "common/unique_fd.hpp"

namespace takosumi::supervise {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Besides the parent-death signal: a cheap second look, in case the signal was missed.
constexpr auto kParentCheck = 1s;
// After the command's exit, how long its pipes may still be emptied (against a leftover that
// keeps writing).
constexpr auto kDrainLimit = 5s;

using Fd = UniqueFd;

// exec_child writes after fork, where nothing may allocate, and the supervisor links no project
// library: common/raw_write.hpp, not common/fd_io.hpp.
bool write_all(int fd, const char* data, std::size_t size) noexcept { return raw_write_all(fd, data, size); }

bool write_all(int fd, std::string_view text) noexcept {
  return write_all(fd, text.data(), text.size());
}

void say(const std::string& message) {
  write_all(STDERR_FILENO, "takosumi-supervise: " + message + "\n");
}

std::string with_errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// fds 0-2 open (on /dev/null where the caller left them closed), so that no pipe of ours lands
// on them and the child's dup2 stays simple.
void ensure_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) (void)::open("/dev/null", O_RDWR);
}

void set_disposition(int sig, void (*handler)(int)) noexcept {
  struct sigaction action {};
  action.sa_handler = handler;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(sig, &action, nullptr);
}

// Everything the child needs after fork, made before it: the child allocates nothing.
struct ChildPlan {
  std::vector<char*> argv;
  std::string exec_failed;  // "takosumi-supervise: exec <program>: "
  sigset_t mask;            // the mask the supervisor was started with
  bool interrupt_group;
  int out;
  int err;
};

[[noreturn]] void exec_child(const ChildPlan& plan) noexcept {
  for (int sig : {SIGPIPE, SIGTERM, SIGHUP, SIGUSR1, SIGCHLD}) set_disposition(sig, SIG_DFL);
  // Like the launcher for a wrapper that does not forward signals: it keeps SIGINT ignored and
  // is interrupted through the group.
  set_disposition(SIGINT, plan.interrupt_group ? SIG_IGN : SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &plan.mask, nullptr);
  if (::dup2(plan.out, STDOUT_FILENO) >= 0 && ::dup2(plan.err, STDERR_FILENO) >= 0)
    ::execv(plan.argv[0], plan.argv.data());
  const char* reason = ::strerrordesc_np(errno);
  write_all(STDERR_FILENO, plan.exec_failed);
  write_all(STDERR_FILENO, reason ? reason : "unknown error");
  write_all(STDERR_FILENO, "\n");
  ::_exit(kSuperviseExecFailed);
}

// Dies of sig as the command did, so the launcher sees the same WIFSIGNALED status. Returns
// only for a signal whose default action does not end a process.
int die_of(int sig) {
  const struct rlimit no_core {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // a core of the supervisor would hold relayed output
  set_disposition(sig, SIG_DFL);
  sigset_t only;
  ::sigemptyset(&only);
  ::sigaddset(&only, sig);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
  return 128 + sig;
}

// One of the command's output streams on its way to the supervisor's own.
struct Relay {
  Fd from;
  int to;
  bool writing = true;  // false after a failed write: read on, drop what is read
};

class Supervisor {
 public:
  explicit Supervisor(const SuperviseArguments& arguments) : args_(arguments) {}
  int run();

 private:
  bool watch_signals();
  bool watch_parent();
  bool take_lock();
  bool start_child();
  void supervise_child();
  int poll_timeout_ms(Clock::time_point now) const;
  void read_signals();
  void on_interrupt();
  void stop();
  void check_parent();
  void reap();
  void on_time(Clock::time_point now);
  void relay(Relay& r);
  void drain();
  int finish();
  void kill_leftovers() const;

  const SuperviseArguments& args_;
  sigset_t original_mask_{};
  Fd signals_;  // signalfd for the blocked, watched signals
  Fd lock_;
  pid_t parent_ = 0;
  pid_t child_ = -1;
  bool leads_group_ = false;  // the launcher's setsid made the supervisor its group's leader
  std::array<Relay, 2> relays_{Relay{Fd(), STDOUT_FILENO}, Relay{Fd(), STDERR_FILENO}};
  std::optional<int> status_;  // wait status, once reaped; child_ must not be signalled after
  bool parent_gone_ = false;
  bool interrupted_ = false;  // the command had its one SIGINT
  bool stopping_ = false;
  bool killed_ = false;
  Clock::time_point kill_at_ = Clock::time_point::max();
  Clock::time_point next_parent_check_;
  std::array<char, 64 * 1024> buffer_;
};

int Supervisor::run() {
  ensure_standard_fds();
  if (!watch_signals() || !watch_parent() || !take_lock() || !start_child())
    return kSuperviseFailed;
  supervise_child();
  drain();
  return finish();
}

bool Supervisor::watch_signals() {
  sigset_t watched;
  ::sigemptyset(&watched);
  for (int sig : {SIGCHLD, SIGUSR1, SIGTERM, SIGHUP, SIGINT}) ::sigaddset(&watched, sig);
  if (::sigprocmask(SIG_BLOCK, &watched, &original_mask_) != 0) {
    say(with_errno("sigprocmask"));
    return false;
  }
  // Blocked, SIGINT waits for the signalfd and never ends the supervisor; it must not stay
  // ignored as the launcher starts us in interrupt_group mode (see on_interrupt).
  set_disposition(SIGINT, SIG_DFL);
  set_disposition(SIGPIPE, SIG_IGN);
  signals_ = Fd(::signalfd(-1, &watched, SFD_CLOEXEC | SFD_NONBLOCK));
  if (signals_.get() < 0) say(with_errno("signalfd"));
  return signals_.get() >= 0;
}

// Must come before anything slow: a parent that died before the first getppid() would go
// unnoticed (its orphan's new parent would pass for the agent).
bool Supervisor::watch_parent() {
  parent_ = ::getppid();
  if (::prctl(PR_SET_PDEATHSIG, SIGUSR1) != 0) {
    say(with_errno("prctl(PR_SET_PDEATHSIG)"));
    return false;
  }
  if (::getppid() != parent_) {
    say("the agent is gone already; the command was not started");
    return false;
  }
  next_parent_check_ = Clock::now() + kParentCheck;
  return true;
}

// Not common/file_lock.hpp: takosumi-supervise stays a plain POSIX program that links no
// project library (only header-only UniqueFd and its command line), so it adds nothing to the
// memory of a process that runs under the Run's RLIMIT_AS; the agent probes this very lock with
// is_file_locked(), which sees the same flock.
bool Supervisor::take_lock() {
  if (!args_.lock_file) return true;
  const std::string path = args_.lock_file->string();
  lock_ = Fd(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (lock_.get() < 0) {
    say(with_errno("lock " + path + ": open"));
    return false;
  }
  if (::flock(lock_.get(), LOCK_EX | LOCK_NB) == 0) return true;
  if (errno == EWOULDBLOCK)
    say("lock " + path + " is held by another supervisor: a command of this workspace is still "
        "running; this one was not started");
  else
    say(with_errno("lock " + path + ": flock"));
  return false;
}

bool Supervisor::start_child() {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    say(with_errno("pipe"));
    return false;
  }
  Fd out_read(out[0]), out_write(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) {
    say(with_errno("pipe"));
    return false;
  }
  Fd err_read(err[0]), err_write(err[1]);
  ChildPlan plan{{}, "takosumi-supervise: exec " + args_.command.front() + ": ", original_mask_,
                 args_.interrupt_group, out_write.get(), err_write.get()};
  for (const auto& a : args_.command) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  leads_group_ = ::getpgrp() == ::getpid();
  child_ = ::fork();
  if (child_ < 0) {
    say(with_errno("fork"));
    return false;
  }
  if (child_ == 0) exec_child(plan);
  relays_[0].from = std::move(out_read);
  relays_[1].from = std::move(err_read);
  return true;  // the write ends close here: the child holds the only copies
}

void Supervisor::supervise_child() {
  while (!status_) {
    std::array<pollfd, 3> fds{{{signals_.get(), POLLIN, 0},
                               {relays_[0].from.get(), POLLIN, 0},
                               {relays_[1].from.get(), POLLIN, 0}}};
    // poll fails only for EINTR (nothing is delivered: all watched signals are blocked) or
    // ENOMEM; either way the next round simply tries again.
    ::poll(fds.data(), fds.size(), poll_timeout_ms(Clock::now()));
    if (fds[0].revents) read_signals();
    for (std::size_t i = 0; i < relays_.size(); ++i)
      if (fds[i + 1].revents) relay(relays_[i]);
    on_time(Clock::now());
  }
}

int Supervisor::poll_timeout_ms(Clock::time_point now) const {
  auto until = next_parent_check_;
  if (stopping_ && !killed_) until = std::min(until, kill_at_);
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
  return static_cast<int>(std::clamp<std::int64_t>(ms, 0, INT_MAX));
}

void Supervisor::read_signals() {
  signalfd_siginfo info;
  while (::read(signals_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    switch (static_cast<int>(info.ssi_signo)) {
      case SIGCHLD: reap(); break;
      case SIGUSR1: check_parent(); break;
      case SIGINT: on_interrupt(); break;
      default: stop(); break;  // SIGTERM, SIGHUP
    }
  }
}

// The launcher's cancel. Without interrupt_group it interrupts the supervisor alone, which passes
// it on; with it the whole group had the signal, the command too. Only the first one counts: a
// second interrupt makes tofu give up at once, without persisting its state.
void Supervisor::on_interrupt() {
  if (interrupted_ || status_) return;
  interrupted_ = true;
  if (!args_.interrupt_group) ::kill(child_, SIGINT);
}

// The agent is gone or stopping: one interrupt (unless the launcher's cancel was one already),
// SIGKILL after the grace period (on_time).
void Supervisor::stop() {
  if (stopping_ || status_) return;
  stopping_ = true;
  if (!interrupted_) {
    interrupted_ = true;
    // In interrupt_group mode the command ignores SIGINT (bubblewrap) and what runs inside it
    // takes it from the group; the supervisor takes its own copy through the signalfd. Only in a
    // group it leads: never the group of whoever started it by hand.
    ::kill(args_.interrupt_group && leads_group_ ? -::getpid() : child_, SIGINT);
  }
  kill_at_ = Clock::now() + args_.grace;
}

// getppid() changes when the agent dies: the orphan goes to init or a subreaper.
void Supervisor::check_parent() {
  if (parent_gone_ || ::getppid() == parent_) return;
  parent_gone_ = true;
  stop();
}

void Supervisor::reap() {
  int status = 0;
  if (!status_ && ::waitpid(child_, &status, WNOHANG) == child_) status_ = status;
}

void Supervisor::on_time(Clock::time_point now) {
  if (now >= next_parent_check_) {
    check_parent();
    reap();
    next_parent_check_ = now + kParentCheck;
  }
  if (stopping_ && !killed_ && !status_ && now >= kill_at_) {
    killed_ = true;
    ::kill(child_, SIGKILL);
  }
}

void Supervisor::relay(Relay& r) {
  const ssize_t n = ::read(r.from.get(), buffer_.data(), buffer_.size());
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    r.from.reset();
    return;
  }
  if (r.writing && !write_all(r.to, buffer_.data(), static_cast<std::size_t>(n))) r.writing = false;
}

// Everything the command wrote is in the pipes once it has exited, so they are emptied without
// waiting for end-of-file: a leftover that still holds them must not keep the supervisor (the
// launcher, or kill_leftovers, kills it right after).
void Supervisor::drain() {
  const auto until = Clock::now() + kDrainLimit;
  while (Clock::now() < until) {
    std::array<pollfd, 2> fds{
        {{relays_[0].from.get(), POLLIN, 0}, {relays_[1].from.get(), POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), 0) <= 0) return;
    for (std::size_t i = 0; i < relays_.size(); ++i)
      if (fds[i].revents) relay(relays_[i]);
  }
}

int Supervisor::finish() {
  if (parent_gone_ || ::getppid() != parent_) kill_leftovers();
  lock_.reset();
  if (WIFEXITED(*status_)) return WEXITSTATUS(*status_);
  return die_of(WTERMSIG(*status_));
}

// While the agent lives its launcher kills what the command left in the process group, once it
// has reaped the supervisor. With the agent gone nobody else will: SIGKILL to the group, which
// takes the supervisor too — the last thing it does, and its exit status has no reader. Its
// death releases the lock only after the leftovers were sent SIGKILL (the command itself is
// reaped already, its state persisted). Only in a group it leads.
void Supervisor::kill_leftovers() const {
  if (leads_group_) ::kill(-::getpid(), SIGKILL);
}

}  // namespace

int supervise(const SuperviseArguments& arguments) {
  Supervisor supervisor(arguments);
  return supervisor.run();
}

}  // namespace takosumi::supervise
