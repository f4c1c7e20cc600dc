#pragma once
// Runs one program to its end (fork + execve, no shell) for the bare-OpenTofu baseline: the
// baseline must pay for process start-up exactly as a user at a terminal would, nothing more.
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace takosumi::bench {

struct Command {
  std::vector<std::string> argv;  // argv[0] is an absolute path
  std::filesystem::path cwd;
  std::vector<std::string> env;    // the whole environment, "NAME=value"
  std::filesystem::path stdout_file;  // empty: /dev/null
  std::filesystem::path stderr_file;  // empty: /dev/null
};

// Waits for the program and returns its exit status (128 + signal when killed). Fails only when
// the program could not be started at all.
Result<int> run_command(const Command& command);

}  // namespace takosumi::bench
