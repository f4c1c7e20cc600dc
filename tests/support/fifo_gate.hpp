#pragma once
// A Run held in `tofu plan` on purpose: the module reads a FIFO (hashicorp/local's local_file data
// source), which blocks until the test opens the gate, so the Run is surely in progress when the
// test acts (a revocation, a cancel).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/support/child_process.hpp"

namespace takosumi::testing {

class FifoGate {
 public:
  explicit FifoGate(std::filesystem::path fifo) : fifo_(std::move(fifo)) {
    if (::mkfifo(fifo_.c_str(), 0600) != 0) ADD_FAILURE() << "mkfifo " << fifo_;
  }

  // The module, with extra_hcl after the gate's data source.
  std::string module(const std::string& extra_hcl = "") const {
    return R"(terraform {
  required_providers {
    local = { source = "hashicorp/local" }
  }
}
data "local_file" "gate" { filename = ")" +
           fifo_.string() + "\" }\n" + extra_hcl;
  }

  // Writes the gate's content once a reader has the FIFO open; false when none came within the
  // time (a non-blocking open fails with ENXIO until then, so the test never hangs on it).
  bool open(std::chrono::seconds within) const {
    int fd = -1;
    eventually([&] { return (fd = ::open(fifo_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0; },
               within);
    if (fd < 0) return false;
    const bool written = ::write(fd, "open\n", 5) == 5;
    ::close(fd);
    return written;
  }

 private:
  std::filesystem::path fifo_;
};

}  // namespace takosumi::testing
