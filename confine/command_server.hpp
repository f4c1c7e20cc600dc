#pragma once
// `takosumi-confine --serve`: one sandbox for a whole Run phase. Instead of becoming one command,
// takosumi-confine (after it has confined itself exactly as for one: noexec mounts, no
// capabilities, the process limit, Landlock, seccomp — all inherited by what it starts) reads
// commands on stdin and runs them one after the other (confine/command_frames.hpp), so a phase's
// tofu commands share one bubblewrap, one supervisor and one confinement instead of starting
// three of each per command.
//
// It must be the first process of the sandbox's pid namespace (bubblewrap --as-pid-1), and
// refuses to serve otherwise: after each command it kills everything else in that namespace and
// reaps it before it reports the command's end, so between commands nothing of the Run runs —
// what a command leaves behind can neither touch the files the agent reads next nor meet the next
// command. As pid 1 it cannot be killed from inside the namespace (it installs no handler), and it
// is not dumpable: a command can neither trace nor read it (seccomp denies ptrace besides).
// The commands start with the server's signal dispositions (SIGINT ignored, as bubblewrap's
// command did: the agent interrupts the whole process group) and a default SIGPIPE, stdin
// /dev/null, their stdout and stderr on pipes of their own that the server relays in frames.
// End of stdin (the agent closed it, or is gone) ends the server, and with it the sandbox.
#include <cstdint>

namespace takosumi::confine {

// Returns the process's exit code: 0 at the end of stdin, kConfineFailed for a malformed request
// or a server that cannot work (not pid 1, no pipes).
// cpu_seconds > 0: each command's RLIMIT_CPU (limits.cpuSeconds).
int serve_commands(std::uint64_t cpu_seconds);

}  // namespace takosumi::confine
