#pragma once
// The runner's public face, besides RunExecutor (run_executor.hpp) and the types of a Run
// (run_types.hpp): what a host of Runs — the agent — uses around them. The subfolders are the
// runner's own; a program outside the runner includes only the headers at runner/'s root, and
// what it may use of them is named here.
#include "runner/phases/phase_timer.hpp"      // the agent's own phases in a Run's phaseMillis
#include "runner/policy/mirror_verify.hpp"    // `mirror verify`, --check-config: a mirror against pins
#include "runner/policy/verified_mirror.hpp"  // `mirror add`
#include "runner/state/run_workspace.hpp"     // the workspaces a restart finds (recovery, spool, journal)
#include "runner/state/state_checkpoint.hpp"  // the newest state a killed apply left
#include "runner/tofu/run_cgroups.hpp"        // the Runs' cgroup parent, probed at start
#include "runner/tofu/sandbox.hpp"            // bubblewrap's arguments, checked at start
#include "runner/tofu/tofu_builds.hpp"        // tofu.versionsDir, listed at start
