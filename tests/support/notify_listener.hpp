#pragma once
// systemd's side of the notify protocol for tests: a real AF_UNIX datagram socket a daemon gets as
// NOTIFY_SOCKET, collecting every assignment it sends ("READY=1", "STATUS=…", "WATCHDOG=1"). A
// thread reads the socket all the time, as PID 1 does: sd_notify blocks on a full socket.
#include <sys/socket.h>
#include <sys/un.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.hpp"

namespace takosumi::testing {

class NotifyListener {
 public:
  explicit NotifyListener(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      ADD_FAILURE() << "cannot bind " << path_;
    reader_ = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) > 0) drain();
      }
    });
  }
  ~NotifyListener() {
    reader_.request_stop();
    reader_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  NotifyListener(const NotifyListener&) = delete;
  NotifyListener& operator=(const NotifyListener&) = delete;

  // The environment that points a daemon here, with systemd's watchdog at watchdog_usec.
  std::map<std::string, std::string> environment(long watchdog_usec) const {
    return {{"NOTIFY_SOCKET", path_.string()},
            {"WATCHDOG_USEC", std::to_string(watchdog_usec)},
            {"TAKOSUMI_TEST_HOOKS", "1"}};
  }

  // Every assignment received so far, in order.
  std::vector<std::string> received() {
    drain();
    std::lock_guard lock(mutex_);
    return received_;
  }
  void forget() {
    drain();
    std::lock_guard lock(mutex_);
    received_.clear();
  }
  bool seen(const std::string& assignment) {
    for (const auto& a : received())
      if (a == assignment) return true;
    return false;
  }
  std::size_t count(const std::string& assignment) {
    std::size_t n = 0;
    for (const auto& a : received()) n += a == assignment;
    return n;
  }
  // Waits until the assignment arrives (or timeout); true when it did.
  bool wait_for(const std::string& assignment, std::chrono::seconds timeout) {
    return eventually([&] { return seen(assignment); }, timeout);
  }

 private:
  void drain() {
    char buf[4096];
    std::lock_guard lock(mutex_);
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return;
      std::string message(buf, static_cast<std::size_t>(n));
      std::size_t start = 0;
      while (start < message.size()) {
        auto end = message.find('\n', start);
        if (end == std::string::npos) end = message.size();
        if (end > start) received_.push_back(message.substr(start, end - start));
        start = end + 1;
      }
    }
  }

  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mutex_;
  std::vector<std::string> received_;
  std::jthread reader_;  // last: stopped before the members it uses go
};

}  // namespace takosumi::testing
