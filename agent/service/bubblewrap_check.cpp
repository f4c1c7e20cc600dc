#include "agent/service/bubblewrap_check.hpp"

#include <poll.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error_codes.hpp"
#include "common/unique_fd.hpp"
#include "common/failure_codes.hpp"
#include "runner/host.hpp"

namespace takosumi::agent {
namespace {

constexpr std::size_t kMaxComplaint = 2048;
constexpr int kTimeoutMillis = 20'000;  // bubblewrap and `true` take milliseconds

struct Outcome {
  int status = -1;
  bool timed_out = false;
  std::string stderr_text;
};

// Runs argv with an empty environment and default signal dispositions and mask (the agent has
// its stop signals blocked while it starts), its stderr collected, for at most kTimeoutMillis.
Result<Outcome> run(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return fail(errc::kIoError, "pipe for bubblewrap");
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char* const empty_env[] = {nullptr};
  const pid_t pid = ::fork();
  if (pid < 0) return fail(errc::kIoError, "fork for bubblewrap");
  if (pid == 0) {
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGCHLD, SIG_DFL);
    ::dup2(write_end.get(), 2);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
    }
    ::execve(args[0], args.data(), empty_env);
    const char* why = "execve failed\n";
    (void)!::write(2, why, std::strlen(why));
    ::_exit(127);
  }
  write_end.reset();
  Outcome outcome;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMillis);
  char buf[512];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      outcome.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (outcome.stderr_text.size() < kMaxComplaint) outcome.stderr_text.append(buf, static_cast<std::size_t>(n));
  }
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited == pid) outcome.status = status;
  while (!outcome.stderr_text.empty() && outcome.stderr_text.back() == '\n') outcome.stderr_text.pop_back();
  return outcome;
}

}  // namespace

Status check_bubblewrap(const config::AgentConfig& config) {
  if (!config.sandbox.enabled) return {};
  const auto& bwrap = config.sandbox.bubblewrap;
  if (!bwrap.is_absolute() || ::access(bwrap.c_str(), X_OK) != 0)
    return fail(errc::kSandboxFailed,
                "sandbox.bubblewrap " + bwrap.string() + " is missing or not executable; install "
                "bubblewrap or set sandbox.bubblewrap (the agent does not run tofu unsandboxed "
                "unless sandbox.mode is none)");
  std::error_code ec;
  const auto tmp = std::filesystem::temp_directory_path(ec);
  std::string tmpl = ((ec ? std::filesystem::path("/tmp") : tmp) / "takosumi-sandbox-check-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    return fail(errc::kSandboxFailed, "cannot make a directory to check the sandbox in: " + tmpl +
                                          ": " + std::strerror(errno));
  const std::filesystem::path workspace = tmpl;
  runner::SandboxOptions options;
  options.bubblewrap = bwrap;
  options.network = config.sandbox.network;
  options.tmp_bytes = 1u << 20;
  std::vector<std::string> argv{bwrap.string()};
  for (auto& a : runner::sandbox_arguments(options, workspace, workspace)) argv.push_back(std::move(a));
  argv.emplace_back("/usr/bin/true");
  auto outcome = run(argv);
  std::filesystem::remove_all(workspace, ec);
  if (!outcome) return std::unexpected(outcome.error());
  if (!outcome->timed_out && WIFEXITED(outcome->status) && WEXITSTATUS(outcome->status) == 0)
    return {};
  const std::string said = outcome->timed_out       ? std::string("it did not finish within 20 s")
                           : outcome->stderr_text.empty() ? std::string("no message")
                                                          : outcome->stderr_text;
  return fail(errc::kSandboxFailed,
              "bubblewrap (" + bwrap.string() + ") cannot build a Run's sandbox on this host: " +
                  said +
                  ". Unprivileged user namespaces must be allowed, and under systemd the unit must "
                  "not set RestrictNamespaces=, PrivateUsers=, ProtectKernelTunables=, "
                  "ProtectKernelLogs=, ProtectProc= or ProcSubset= (docs/operations.md \"The "
                  "systemd units' hardening\"); sandbox.mode: none runs without a sandbox");
}

}  // namespace takosumi::agent
