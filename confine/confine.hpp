#pragma once
// takosumi-confine: the last step inside a Run's bubblewrap sandbox before tofu starts. Once
// bubblewrap has built the mounts (a Landlocked process can no longer mount), it
// - makes every writable mount noexec, in a mount namespace of its own, and drops the
//   capabilities bubblewrap granted for that (confine/noexec_mounts.hpp, confine/capabilities.hpp),
// - sets RLIMIT_NPROC (counted per user namespace: only this Run's processes, for a non-root
//   agent; a cgroup's pids.max is the limit that binds a root agent — see runner/tofu/pids_cgroup.hpp),
// - restricts itself and all it executes with Landlock: execute rights only for the listed paths
//   (and the dynamic loader when asked), no TCP bind, TCP connect only to listed ports, signals and
//   abstract sockets scoped to the sandbox (confine/landlock.hpp),
// - loads the seccomp filter (confine/seccomp_filter.hpp),
// - and executes the command in its own place (same pid: the supervisor's signals reach tofu),
//   or with --serve runs a Run phase's commands one after the other (confine/command_server.hpp).
// Failures print one line "takosumi-confine: <what>" on stderr and exit kConfineFailed; nothing
// runs then. Without Landlock, landlock_required fails; otherwise the command runs without it.
#include "confine/confine_arguments.hpp"

namespace takosumi::confine {

inline constexpr int kConfineFailed = 125;
inline constexpr int kConfineExecFailed = 127;
inline constexpr std::string_view kConfineErrorPrefix = "takosumi-confine: ";

// Returns only on failure (the exit code); on success the process becomes the command.
int confine(const ConfineArguments& arguments);

}  // namespace takosumi::confine
