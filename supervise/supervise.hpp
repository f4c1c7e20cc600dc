#pragma once
// takosumi-supervise: stands between the agent's launcher and one tofu command, so that the
// command is never killed outright because the agent died (OOM, crash, SIGKILL). Linux only.
//
// - The command runs as the supervisor's child in the supervisor's process group (the launcher's
//   group signals and leftover kill reach it), with the supervisor's environment, directory and
//   limits; stdout and stderr are relayed byte for byte. When a write fails (the agent is gone)
//   that stream is still read and dropped, so the command neither blocks nor gets SIGPIPE.
// - The agent is gone when the supervisor's parent changes (PR_SET_PDEATHSIG, checked again every
//   second). Then, and on SIGTERM or SIGHUP, the command gets one SIGINT (tofu persists its state
//   and stops its providers) — to the whole group with interrupt_group — and SIGKILL after the
//   grace period.
// - SIGINT to the supervisor is the launcher's cancel: without interrupt_group it is forwarded to
//   the command, with it the command already had it through the group. Either way the command
//   never gets a second interrupt from the supervisor (a second one makes tofu exit at once,
//   without persisting its state).
// - With a lock file, the lock is held from before the command starts until the supervisor
//   exits: a restarted agent knows the command has finished once it can take the lock.
// - Exit: the command's exit code, or death by the command's signal. 125 when the supervisor
//   fails itself (lock held, bad arguments, no pipe or fork) and the command never ran; 127 when
//   the program cannot be executed.
#include "supervise/supervise_arguments.hpp"

namespace takosumi::supervise {

inline constexpr int kSuperviseFailed = 125;
inline constexpr int kSuperviseExecFailed = 127;

// Runs the whole supervision and returns the supervisor's exit code; when the command died of a
// signal it does not return but dies of the same signal. Call it from main, single-threaded.
int supervise(const SuperviseArguments& arguments);

}  // namespace takosumi::supervise
