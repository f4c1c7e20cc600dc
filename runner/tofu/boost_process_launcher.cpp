#include "runner/tofu/boost_process_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
// Boost 1.81's Process v2 in BOOST_PROCESS_USE_STD_FS mode forgets these two includes.
#include <boost/optional.hpp>
#include <boost/type_traits.hpp>
#include <boost/process/v2.hpp>

#include <array>
#include <cstring>

#include "common/error_codes.hpp"
#include "common/unique_fd.hpp"
#include "common/failure_codes.hpp"
#include "supervise/supervise_arguments.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kChunk = 16 * 1024;
// After the child exits, how long its output may keep draining (a grandchild that escaped the
// process group could hold the pipes open forever).
constexpr auto kDrainLimit = std::chrono::seconds(5);

// Runs in the child after fork: makes it the leader of its own session and process group,
// applies the resource limits (no core dumps ever: a core of tofu holds the state and
// credentials) and, for wrappers that do not forward signals, starts it with SIGINT ignored
// (see ProcessSpec).
struct ChildSetup {
  const ProcessSpec& spec;
  // Opened (and owned, as UniqueFds) by the parent before fork: the child allocates nothing
  // and its one-byte writes need no loop (cgroup.procs takes the whole pid or fails). One per
  // hierarchy (cgroup v1 has one per controller); -1 ends the list.
  std::array<int, 4> cgroup_procs_fds{-1, -1, -1, -1};
  bp::error_code on_exec_setup(bp::posix::default_launcher&, const std::filesystem::path&,
                               const char* const*) {
    // A new session: its own process group, and no controlling terminal (TIOCSTI) for a module.
    if (::setsid() == -1) return bp::error_code(errno, bp::system_category());
    for (const int fd : cgroup_procs_fds)
      if (fd >= 0 && ::write(fd, "0", 1) != 1) return bp::error_code(errno, bp::system_category());
    auto limit = [](int resource, rlim_t value) {
      struct rlimit current {};
      if (::getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY &&
          current.rlim_max < value)
        value = current.rlim_max;  // the service manager's lower hard limit stays in force
      const struct rlimit r{value, value};
      return ::setrlimit(resource, &r) == 0;
    };
    if (!limit(RLIMIT_CORE, 0)) return bp::error_code(errno, bp::system_category());
    if (spec.limits.address_space_bytes &&
        !limit(RLIMIT_AS, static_cast<rlim_t>(*spec.limits.address_space_bytes)))
      return bp::error_code(errno, bp::system_category());
    if (spec.limits.cpu_seconds && !limit(RLIMIT_CPU, static_cast<rlim_t>(*spec.limits.cpu_seconds)))
      return bp::error_code(errno, bp::system_category());
    if (spec.limits.file_size_bytes &&
        !limit(RLIMIT_FSIZE, static_cast<rlim_t>(*spec.limits.file_size_bytes)))
      return bp::error_code(errno, bp::system_category());
    // Without a supervisor nothing would stop tofu once the agent is gone (the unit leaves the
    // agent's children alone): it dies with the agent, as docs/operations.md says.
    if (!spec.supervisor) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (spec.interrupt_group) ::signal(SIGINT, SIG_IGN);
    return {};
  }
};

// The child's complete environment ("NAME=value" strings owned by the caller). Boost's own
// process_environment would do, but 1.81 leaves its on_setup out of the header-only build.
struct ExplicitEnvironment {
  explicit ExplicitEnvironment(const std::vector<std::string>& vars) {
    for (const auto& v : vars) pointers.push_back(v.c_str());
    pointers.push_back(nullptr);
  }
  bp::error_code on_setup(bp::posix::default_launcher& launcher, const std::filesystem::path&,
                          const char* const*) {
    launcher.env = pointers.data();
    return {};
  }
  std::vector<const char*> pointers;
};


// Everything the three cooperating coroutines (two pumps + reaper, watchdog) share. Lives on the
// frame of async_run; all access is on the io thread.
struct Supervision {
  Supervision(asio::any_io_executor ex, bp::process proc_in, const ProcessSpec& spec_in,
              CancelSignal& cancel_in)
      : proc(std::move(proc_in)), pgid(proc.id()), out(ex), err(ex), wake(ex), spec(spec_in),
        cancel(cancel_in) {}

  bp::process proc;
  pid_t pgid;
  asio::readable_pipe out;
  asio::readable_pipe err;
  asio::steady_timer wake;  // the watchdog sleeps on it; cancel and exit wake it early
  const ProcessSpec& spec;
  CancelSignal& cancel;
  bool exited = false;
  bool interrupted = false;
  bool killed = false;
  ProcessExit result;
};

asio::awaitable<void> pump(asio::readable_pipe& pipe, OutputStream stream, const OutputSink& sink) {
  if (!pipe.is_open()) co_return;
  std::array<char, kChunk> buf;
  for (;;) {
    auto [ec, n] = co_await pipe.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (n > 0 && sink) sink(stream, std::string_view(buf.data(), n));
    if (ec) break;
  }
}

asio::awaitable<void> reap(Supervision& s) {
  auto [ec, code] = co_await s.proc.async_wait(asio::as_tuple(asio::use_awaitable));
  const int status = s.proc.native_exit_code();
  s.proc.detach();  // reaped: its pid may be reused, so nothing may signal it any more
  s.exited = true;
  if (!ec && WIFEXITED(status)) {
    s.result.exit_code = WEXITSTATUS(status);
  } else if (!ec && WIFSIGNALED(status)) {
    s.result.term_signal = WTERMSIG(status);
  }
  ::kill(-s.pgid, SIGKILL);  // leftovers of the child's group; ESRCH when there are none
  s.wake.cancel();
}

// Sleeps until the deadline, a cancel request or the child's exit, then applies the stop
// ladder: SIGINT to the child itself, SIGKILL after the grace period. Once the child has exited
// it bounds how long output may still drain.
asio::awaitable<void> watchdog(Supervision& s) {
  const auto deadline = Clock::now() + s.spec.timeout;
  Clock::time_point kill_at = Clock::time_point::max();
  Clock::time_point drain_until = Clock::time_point::max();
  for (;;) {
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none)
      co_return;
    const auto now = Clock::now();
    if (s.exited) {
      if (drain_until == Clock::time_point::max()) drain_until = now + kDrainLimit;
      if (now >= drain_until) {
        s.out.close();
        s.err.close();
        co_return;
      }
    } else if (!s.interrupted && (s.cancel.requested() || now >= deadline)) {
      (s.cancel.requested() ? s.result.cancelled : s.result.timed_out) = true;
      s.interrupted = true;
      // The child only: its plugins must not die first. A wrapper started with SIGINT ignored
      // takes it for the whole group, where tofu (which handles it) and its plugins (which
      // ignore it) are.
      ::kill(s.spec.interrupt_group ? -s.pgid : s.proc.id(), SIGINT);
      kill_at = now + s.spec.kill_grace;
    } else if (s.interrupted && !s.killed && now >= kill_at) {
      s.killed = true;
      ::kill(s.proc.id(), SIGKILL);
    }
    auto next = s.exited ? drain_until : (s.interrupted ? kill_at : deadline);
    if (s.killed && !s.exited) next = Clock::time_point::max();
    s.wake.expires_at(next);
    co_await s.wake.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

// What is actually executed: the program itself, or the supervisor with the program after "--".
struct CommandLine {
  std::filesystem::path program;
  std::vector<std::string> args;
};

Result<CommandLine> command_line(const ProcessSpec& spec) {
  if (!spec.supervisor) return CommandLine{spec.program, spec.args};
  // The supervisor could only report a missing program by exit code 127; fail as without it.
  if (::access(spec.program.c_str(), X_OK) != 0)
    return fail(errc::kSandboxFailed,
                "start " + spec.program.string() + ": " + std::strerror(errno));
  supervise::SuperviseArguments supervise;
  supervise.grace = std::chrono::duration_cast<std::chrono::milliseconds>(spec.kill_grace);
  supervise.interrupt_group = spec.interrupt_group;
  supervise.lock_file = spec.supervisor->lock_file;
  supervise.command.push_back(spec.program.string());
  supervise.command.insert(supervise.command.end(), spec.args.begin(), spec.args.end());
  return CommandLine{spec.supervisor->program, supervise::format_supervise_arguments(supervise)};
}

Result<UniqueFd> open_stdout_file(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid())
    return fail(errc::kSandboxFailed, "open " + path.string() + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

asio::awaitable<Result<ProcessExit>> BoostProcessLauncher::async_run(ProcessSpec spec,
                                                                     OutputSink sink,
                                                                     CancelSignal& cancel) {
  auto ex = co_await asio::this_coro::executor;
  auto command = command_line(spec);
  if (!command) co_return std::unexpected(command.error());
  UniqueFd file_fd;  // the child has its own copy once started
  if (spec.stdout_file) {
    auto fd = open_stdout_file(*spec.stdout_file);
    if (!fd) co_return std::unexpected(fd.error());
    file_fd = std::move(*fd);
  }
  std::vector<UniqueFd> cgroup_fds;
  ChildSetup setup{spec};
  if (spec.cgroup_procs.size() > setup.cgroup_procs_fds.size())
    co_return fail(errc::kSandboxFailed, "more cgroup hierarchies than the launcher joins");
  for (const auto& procs : spec.cgroup_procs) {
    UniqueFd fd(::open(procs.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd.valid())
      co_return fail(errc::kSandboxFailed, "join cgroup " + procs.string() + ": " + std::strerror(errno));
    setup.cgroup_procs_fds[cgroup_fds.size()] = fd.get();
    cgroup_fds.push_back(std::move(fd));
  }
  asio::readable_pipe out(ex), err(ex);
  bp::error_code ec;
  auto proc = [&] {
    ExplicitEnvironment env{spec.env};
    bp::process_start_dir dir{spec.cwd};
    if (file_fd.get() >= 0)
      return bp::default_process_launcher()(ex, ec, command->program, command->args,
                                            bp::process_stdio{nullptr, file_fd.get(), err}, env,
                                            dir, setup);
    return bp::default_process_launcher()(ex, ec, command->program, command->args,
                                          bp::process_stdio{nullptr, out, err}, env, dir, setup);
  }();
  if (ec)
    co_return fail(errc::kSandboxFailed,
                   "start " + command->program.string() + ": " + ec.message());

  Supervision s(ex, std::move(proc), spec, cancel);
  s.out = std::move(out);
  s.err = std::move(err);
  cancel.set_waker([&s] { s.wake.cancel(); });
  using namespace asio::experimental::awaitable_operators;
  try {
    co_await ((pump(s.out, OutputStream::out, sink) && pump(s.err, OutputStream::err, sink) &&
               reap(s)) ||
              watchdog(s));
  } catch (...) {
    cancel.clear_waker();
    throw;
  }
  cancel.clear_waker();
  co_return s.result;
}

}  // namespace takosumi::runner
