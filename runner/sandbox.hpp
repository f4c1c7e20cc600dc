#pragma once
// Runs a tofu command inside bubblewrap: new user, pid, ipc, uts (and cgroup, where possible)
// namespaces, no capabilities, the system read-only and reduced to what tofu and its plugins
// need (/usr, the library and binary directories, a short list of /etc files), a private /tmp,
// /proc and /dev, the tofu binary and provider mirror read-only, and writable only the Run's
// workspace (plus paths the operator listed). The agent's configuration, keys, tokens, git cache,
// spool and every other Run's workspace are simply not in the sandbox's file system.
// --die-with-parent: the sandbox dies with its parent, takosumi-supervise (which outlives the agent
// only to interrupt tofu and wait for it to save its state). The pid namespace: when tofu exits, nothing
// it started survives.
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "runner/process_launcher.hpp"

namespace takosumi::runner {

struct SandboxOptions {
  std::filesystem::path bubblewrap = "/usr/bin/bwrap";
  bool network = true;  // false: a new, empty network namespace (not even loopback is shared)
  std::vector<std::filesystem::path> read_only;  // bound at the same path, read-only
  std::vector<std::filesystem::path> writable;   // bound at the same path, writable
  // Inside the workspace but read-only in the sandbox, so a module cannot plant links or FIFOs
  // where the agent later writes or wipes (captured output, credential files). Bound when they
  // exist.
  std::vector<std::filesystem::path> protected_paths;
};

// The bubblewrap arguments up to and including "--" (the command follows).
std::vector<std::string> sandbox_arguments(const SandboxOptions& options,
                                           const std::filesystem::path& workspace,
                                           const std::filesystem::path& cwd);

// Rewrites spec so that bubblewrap runs its program inside the sandbox, at the same paths.
// sandbox_failed when bubblewrap is missing or not executable, or a writable path does not exist:
// the agent never falls back to running unsandboxed.
Status wrap_in_sandbox(const SandboxOptions& options, const std::filesystem::path& workspace,
                       ProcessSpec& spec);

// bubblewrap reports its own failures (no user namespaces, a mount it could not make) on stderr
// as "bwrap: …" and exits 1; such a line means the command never ran.
bool is_sandbox_error_line(std::string_view line);

}  // namespace takosumi::runner
