#include "runner/tofu/child_spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "supervise/supervise_arguments.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;

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
    // No signal blocked, whatever the spawning thread blocks: the stop ladder's SIGINT and the
    // supervisor's signals must reach what runs.
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
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

}  // namespace

Result<bp::process> spawn_child(asio::any_io_executor ex, const ProcessSpec& spec, bp::process_stdio stdio) {
  auto command = command_line(spec);
  if (!command) return std::unexpected(command.error());
  std::vector<UniqueFd> cgroup_fds;
  ChildSetup setup{spec};
  if (spec.cgroup_procs.size() > setup.cgroup_procs_fds.size())
    return fail(errc::kSandboxFailed, "more cgroup hierarchies than the launcher joins");
  for (const auto& procs : spec.cgroup_procs) {
    UniqueFd fd(::open(procs.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd.valid())
      return fail(errc::kSandboxFailed, "join cgroup " + procs.string() + ": " + std::strerror(errno));
    setup.cgroup_procs_fds[cgroup_fds.size()] = fd.get();
    cgroup_fds.push_back(std::move(fd));
  }
  bp::error_code ec;
  ExplicitEnvironment env{spec.env};
  bp::process_start_dir dir{spec.cwd};
  auto proc = bp::default_process_launcher()(ex, ec, command->program, command->args, std::move(stdio), env,
                                             dir, setup);
  if (ec) return fail(errc::kSandboxFailed, "start " + command->program.string() + ": " + ec.message());
  return proc;
}

Result<UniqueFd> open_stdout_file(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid())
    return fail(errc::kSandboxFailed, "open " + path.string() + ": " + std::strerror(errno));
  return fd;
}

}  // namespace takosumi::runner
