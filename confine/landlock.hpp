#pragma once
// Landlock (Linux ≥ 5.13): the kernel's own access control for unprivileged processes, used here
// as the Run's execute allowlist. Plain standard C++ over the raw system calls (glibc has no
// wrappers), so takosumi-confine and the agent's start-up check share it.
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

namespace takosumi::confine {

struct LandlockSupport {
  int abi = 0;              // 0: unavailable
  std::string unavailable;  // why, when abi is 0: says which kernel feature is missing
};

// Asks the kernel which Landlock ABI it offers.
LandlockSupport probe_landlock();

struct LandlockRules {
  // Execute rights: these files, and everything beneath these directories. Paths that do not
  // exist are skipped (nothing there to run).
  std::vector<std::string> executable;
  // ABI ≥ 4: nullopt lets TCP connect anywhere; a list only to these ports. Binding TCP ports
  // is always refused where the ABI can (providers talk to tofu over Unix sockets).
  std::optional<std::vector<std::uint16_t>> tcp_connect_ports;
};

// What the ruleset restricts at this ABI, for logs and --check-config ("execute, tcp bind, …").
std::string describe_landlock(int abi, bool tcp_ports_restricted);

// Builds the ruleset for abi (≥ 1, from probe_landlock) and restricts the calling thread and
// everything it executes from now on (PR_SET_NO_NEW_PRIVS is set first). Irreversible. Files
// beneath the kernel's interfaces (/proc, /sys and their kind) can no longer be opened for
// writing: /proc/self/mem would otherwise write code past page protections. At ABI ≥ 6
// also scopes signals and abstract Unix sockets to the sandbox. The error names the failed step.
std::expected<void, std::string> restrict_with_landlock(const LandlockRules& rules, int abi);

}  // namespace takosumi::confine
