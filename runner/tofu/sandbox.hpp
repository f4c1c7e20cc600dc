#pragma once
// Runs a tofu command inside bubblewrap: new user, pid, ipc, uts (and cgroup, where possible)
// namespaces, no capabilities, the system read-only and reduced to what tofu and its plugins
// need (/usr, the library and binary directories, a short list of /etc files), a private /tmp,
// /proc and /dev, the tofu binary and provider mirror read-only, and writable only the Run's
// workspace (plus paths the operator listed). The agent's configuration, keys, tokens, git cache,
// spool and every other Run's workspace are simply not in the sandbox's file system.
// --die-with-parent: the sandbox dies with its parent, takosumi-supervise (which outlives the agent
// only to interrupt tofu and wait for it to save its state). The pid namespace: when tofu exits, nothing
// it started survives. /tmp is a size-capped tmpfs (/var/tmp links to it), /dev is read-only with
// a small /dev/shm. With `confine`, the command runs through takosumi-confine (Landlock, seccomp,
// process limit; confine/confine.hpp), bound read-only into the sandbox and given CAP_SYS_ADMIN and
// CAP_SETPCAP of the sandbox's user namespace, which it uses to make every writable mount and the
// whole workspace noexec and then drops before anything else runs.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "confine/confine_arguments.hpp"
#include "confine/landlock.hpp"
#include "runner/tofu/process_launcher.hpp"

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
  std::uint64_t tmp_bytes = 512ull << 20;  // size of the private /tmp (limits.tmpMiB)
  // takosumi-confine and its arguments (the command is filled in by wrap_in_sandbox).
  struct Confine {
    std::filesystem::path program;
    confine::ConfineArguments arguments;
  };
  std::optional<Confine> confine;
};

// The Run's exec allowlist and system-call filter (sandbox.execControl, sandbox.execAllow,
// sandbox.tcpConnectPorts), applied by takosumi-confine inside every sandbox.
struct ExecControl {
  std::filesystem::path confine;  // takosumi-confine
  bool required = true;           // false: best-effort, warned in every Run's log
  confine::LandlockSupport landlock;       // what the kernel offers, probed once at start
  // Executable (with the dynamic loader) only when the Run's policy allows provisioners or
  // external data: the interpreters those run.
  std::vector<std::filesystem::path> allow{"/bin/sh", "/usr/bin"};
  std::optional<std::vector<std::uint16_t>> tcp_connect_ports;  // nullopt: any
  bool allow_jit = false;  // sandbox.allowJit: no write-xor-execute rule in the seccomp filter
};

// The size of the sandbox's /dev/shm: nothing a Run does needs POSIX shared memory of its own.
inline constexpr std::uint64_t kDevShmBytes = 16ull << 20;

// The bubblewrap arguments up to and including "--" (the command follows).
std::vector<std::string> sandbox_arguments(const SandboxOptions& options,
                                           const std::filesystem::path& workspace,
                                           const std::filesystem::path& cwd);

// Rewrites spec so that bubblewrap runs its program inside the sandbox, at the same paths. With
// confine's `serve`, the sandbox runs the command server as its pid 1 instead, and spec's program
// and arguments are dropped: a Run phase's commands go to it (runner/tofu/phase_sandbox.hpp).
// sandbox_failed when bubblewrap is missing or not executable, or a writable path does not exist:
// the agent never falls back to running unsandboxed.
Status wrap_in_sandbox(const SandboxOptions& options, const std::filesystem::path& workspace,
                       ProcessSpec& spec);

// bubblewrap reports its own failures (no user namespaces, a mount it could not make) on stderr
// as "bwrap: …" and exits 1, takosumi-confine as "takosumi-confine: …" with exit 125 or 127; such
// a line with such an exit means the command never ran.
bool is_sandbox_error_line(std::string_view line);

}  // namespace takosumi::runner
