#pragma once
// The command line of takosumi-supervise, written by the launcher and read by the program:
//   takosumi-supervise --grace-ms <N> [--interrupt-group] [--lock <file>] -- <program> [args...]
// Plain standard C++ (the supervisor links nothing else).
#include <chrono>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace takosumi::supervise {

struct SuperviseArguments {
  // When the agent is gone: how long after the interrupt until the program is killed.
  std::chrono::milliseconds grace{0};
  // The program runs with SIGINT ignored and is interrupted through the process group (see
  // ProcessSpec::interrupt_group).
  bool interrupt_group = false;
  // Held (flock, exclusive) from before the program starts until the supervisor exits.
  std::optional<std::filesystem::path> lock_file;
  std::vector<std::string> command;  // the absolute program, then its arguments
};

// argv[1..] for the supervisor.
std::vector<std::string> format_supervise_arguments(const SuperviseArguments& arguments);

// Reads argv[1..]; the error says what is wrong (unknown or repeated option, missing or malformed
// --grace-ms, no "--", no command, a program that is not an absolute path).
std::expected<SuperviseArguments, std::string> parse_supervise_arguments(
    const std::vector<std::string>& argv);

}  // namespace takosumi::supervise
