#include "bench/e2e/command.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace takosumi::bench {
namespace {

// In the child only: points fd at path (or /dev/null), or exits with 126.
void redirect(int fd, const std::filesystem::path& path, int flags) {
  const int opened = ::open(path.empty() ? "/dev/null" : path.c_str(), flags, 0600);
  if (opened < 0 || ::dup2(opened, fd) < 0) ::_exit(126);
  ::close(opened);
}

}  // namespace

Result<int> run_command(const Command& command) {
  std::vector<char*> argv, envp;
  // execve takes char* const*: the strings are not modified, only the type demands it.
  for (const auto& a : command.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : command.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) return fail("internal", std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    redirect(0, {}, O_RDONLY);
    redirect(1, command.stdout_file, O_WRONLY | O_CREAT | O_TRUNC);
    redirect(2, command.stderr_file, O_WRONLY | O_CREAT | O_APPEND);
    if (!command.cwd.empty() && ::chdir(command.cwd.c_str()) != 0) ::_exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return fail("internal", std::string("waitpid: ") + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) >= 126)
    return fail("internal", "cannot start " + command.argv.at(0) + " (exit " +
                                std::to_string(WEXITSTATUS(status)) + ")");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace takosumi::bench
