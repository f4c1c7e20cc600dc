#include "agent/bubblewrap_check.hpp"

#include <sys/wait.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error_codes.hpp"
#include "common/unique_fd.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/tofu/sandbox.hpp"

namespace takosumi::agent {
namespace {

constexpr std::size_t kMaxComplaint = 2048;

struct Outcome {
  int status = -1;
  std::string stderr_text;
};

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
    ::dup2(write_end.get(), 2);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
    }
    ::execve(args[0], args.data(), empty_env);
    ::_exit(127);
  }
  write_end.reset();
  Outcome outcome;
  char buf[512];
  for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (outcome.stderr_text.size() < kMaxComplaint) outcome.stderr_text.append(buf, static_cast<std::size_t>(n));
  }
  while (::waitpid(pid, &outcome.status, 0) < 0 && errno == EINTR) {
  }
  while (!outcome.stderr_text.empty() && outcome.stderr_text.back() == '\n') outcome.stderr_text.pop_back();
  return outcome;
}

}  // namespace

Status check_bubblewrap(const config::AgentConfig& config) {
  if (!config.sandbox.enabled) return {};
  std::string tmpl = (std::filesystem::temp_directory_path() / "takosumi-sandbox-check-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    return fail(errc::kSandboxFailed, "cannot make a directory to check the sandbox in: " + tmpl);
  const std::filesystem::path workspace = tmpl;
  runner::SandboxOptions options;
  options.bubblewrap = config.sandbox.bubblewrap;
  options.network = config.sandbox.network;
  options.tmp_bytes = 1u << 20;
  std::vector<std::string> argv{config.sandbox.bubblewrap.string()};
  for (auto& a : runner::sandbox_arguments(options, workspace, workspace)) argv.push_back(std::move(a));
  argv.emplace_back("/usr/bin/true");
  auto outcome = run(argv);
  std::error_code ignored;
  std::filesystem::remove_all(workspace, ignored);
  if (!outcome) return std::unexpected(outcome.error());
  if (WIFEXITED(outcome->status) && WEXITSTATUS(outcome->status) == 0) return {};
  return fail(errc::kSandboxFailed,
              "bubblewrap (" + config.sandbox.bubblewrap.string() +
                  ") cannot build a Run's sandbox on this host: " +
                  (outcome->stderr_text.empty() ? std::string("no message") : outcome->stderr_text) +
                  ". Unprivileged user namespaces must be allowed, and under systemd the unit must "
                  "not set RestrictNamespaces=, PrivateUsers=, ProtectKernelTunables=, "
                  "ProtectKernelLogs=, ProtectProc= or ProcSubset= (docs/operations.md \"The "
                  "systemd units' hardening\"); sandbox.mode: none runs without a sandbox");
}

}  // namespace takosumi::agent
