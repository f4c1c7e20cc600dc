#pragma once
// A child process for integration tests (takosumi-control, takosumi-agent): started with an
// explicit argv and extra environment, output appended to a log file, stopped with SIGTERM on
// stop() or destruction (SIGKILL if it does not exit within the grace period).
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace takosumi::testing {

class ChildProcess {
 public:
  // stop_signals_blocked: the child starts with SIGTERM, SIGINT, SIGQUIT and SIGHUP blocked, for a program that
  // blocks them first thing and unblocks them once its handler is in place (takosumi-agent): a
  // stop() that comes before the program's main() then waits for the handler instead of killing
  // it half-started.
  ChildProcess(std::vector<std::string> argv, std::map<std::string, std::string> env,
               std::filesystem::path log_file, bool stop_signals_blocked = false);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // SIGTERM, wait up to grace, then SIGKILL. Returns the exit status (128+signal if killed).
  int stop(std::chrono::seconds grace = std::chrono::seconds(30));
  // Waits for the child to exit on its own; returns -1 on timeout.
  int wait(std::chrono::seconds timeout);
  void kill_now();
  bool running();
  pid_t pid() const { return pid_; }
  const std::filesystem::path& log_file() const { return log_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::filesystem::path log_;
};

// Polls pred every 50 ms until it is true or timeout passes; returns the last value of pred.
template <class Pred>
bool eventually(Pred pred, std::chrono::seconds timeout);

std::string read_text(const std::filesystem::path& p);

}  // namespace takosumi::testing

#include <thread>

template <class Pred>
bool takosumi::testing::eventually(Pred pred, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}
