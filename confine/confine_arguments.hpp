#pragma once
// The command line of takosumi-confine, written by the runner and read by the program:
//   takosumi-confine [--exec <path>]... [--loader] [--tcp-connect-only [--tcp-connect <port>]...]
//                    [--max-processes <N>] [--noexec-writable [--noexec <dir>]...] [--allow-jit]
//                    --landlock required|best-effort (-- <program> [args...] | --serve [--cpu-seconds N])
// Plain standard C++ (the program links only libseccomp besides it).
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

namespace takosumi::confine {

struct ConfineArguments {
  // The only files that may be executed (a directory: everything beneath it). The program itself
  // must be among them.
  std::vector<std::string> exec;
  // Also the dynamic loader (ELF interpreter) the listed programs and this system need: granted
  // only when interpreters are allowed at all, because the loader runs any ELF file it can read.
  bool loader = false;
  // nullopt: any TCP port may be connected to; a list (possibly empty): only these.
  std::optional<std::vector<std::uint16_t>> tcp_connect_ports;
  std::uint64_t max_processes = 0;  // RLIMIT_NPROC inside the Run's user namespace; 0: none
  // Every writable mount, and every mount at or beneath noexec_under, made noexec, then every
  // capability dropped (confine/noexec_mounts.hpp, confine/capabilities.hpp). Needs CAP_SYS_ADMIN
  // and CAP_SETPCAP in the sandbox's user namespace.
  bool noexec_writable = false;
  std::vector<std::string> noexec_under;
  // The seccomp filter lets memory be writable and executable (JIT runtimes; sandbox.allowJit).
  bool allow_jit = false;
  // false: a kernel without Landlock runs the program anyway (the runner warns in the Run's log).
  bool landlock_required = true;
  std::vector<std::string> command;  // the absolute program, then its arguments
  // Instead of a command: serve commands on stdin, one after the other (confine/command_server.hpp).
  bool serve = false;
  std::uint64_t cpu_seconds = 0;  // with serve: each command's RLIMIT_CPU; 0: the inherited one
};

// argv[1..] for takosumi-confine.
std::vector<std::string> format_confine_arguments(const ConfineArguments& arguments);

// Reads argv[1..]; the error says what is wrong (unknown or repeated option, a malformed value, no
// "--" nor --serve, no command, relative paths, a command with --serve).
std::expected<ConfineArguments, std::string> parse_confine_arguments(
    const std::vector<std::string>& argv);

}  // namespace takosumi::confine
