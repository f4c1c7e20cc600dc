#include "tests/support/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace takosumi::testing {

ChildProcess::ChildProcess(std::vector<std::string> argv, std::map<std::string, std::string> env,
                           std::filesystem::path log_file, bool stop_signals_blocked)
    : log_(std::move(log_file)) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> env_strings;
  for (auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : argv) args.push_back(s.data());
  args.push_back(nullptr);

  // The mask is set before fork, not in the child: a stop sent between fork and a mask set in the
  // child would still kill it. The child inherits the mask and keeps it across execve.
  sigset_t stop, previous;
  ::sigemptyset(&stop);
  ::sigaddset(&stop, SIGTERM);
  ::sigaddset(&stop, SIGINT);
  ::sigaddset(&stop, SIGQUIT);
  ::sigaddset(&stop, SIGHUP);
  if (stop_signals_blocked) ::pthread_sigmask(SIG_BLOCK, &stop, &previous);
  pid_ = ::fork();
  if (pid_ == 0) {
    int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::setpgid(0, 0);
    ::execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  if (stop_signals_blocked) ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && status_ < 0) stop(std::chrono::seconds(10));
}

bool ChildProcess::running() {
  if (pid_ <= 0 || status_ >= 0) return false;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

int ChildProcess::wait(std::chrono::seconds timeout) {
  if (!eventually([&] { return !running(); }, timeout)) return -1;
  return status_;
}

void ChildProcess::kill_now() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

int ChildProcess::stop(std::chrono::seconds grace) {
  if (running()) {
    ::kill(pid_, SIGTERM);
    if (wait(grace) < 0) kill_now();
  }
  return status_;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace takosumi::testing
