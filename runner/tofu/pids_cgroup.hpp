#pragma once
// A process limit per Run through the cgroup pids controller (limits.maxProcesses): each Run gets
// its own cgroup with pids.max, which counts every task (threads too) of everything the Run starts,
// whatever its user. Used where this process may manage cgroups: a delegated cgroup v2 subtree
// (systemd `Delegate=`), or a writable cgroup v1 pids hierarchy (a root agent on a v1 host).
// Elsewhere the limit falls back to RLIMIT_NPROC inside the Run's user namespace (takosumi-confine),
// which binds a non-root agent only (the kernel exempts root's processes).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::runner {

class RunCgroup;

class PidsCgroups {
 public:
  // Finds a pids controller this process can give Runs cgroups in: cgroup v2 when the agent runs
  // in a leaf "agent" of a delegated cgroup (systemd Delegate=pids, DelegateSubgroup=agent) —
  // Run cgroups are its siblings —, else a writable cgroup v1 pids hierarchy, where the Run
  // cgroups go under "takosumi/<instance>" (a v1 hierarchy is shared by every agent on the host;
  // instance names this agent installation, stable across restarts). With prepare it enables pids
  // below the delegated cgroup (v2) or creates the parent (v1); without it (--check-config) it
  // changes nothing. not_found when there is none, with a message saying why.
  static Result<PidsCgroups> open(bool prepare, std::string_view instance);

  // "cgroup v2 /sys/fs/cgroup/…" or "cgroup v1 /sys/fs/cgroup/pids/…", for logs.
  std::string describe() const;
  // A new cgroup for one Run (a leftover of the same name is removed first). io_error, or
  // sandbox_failed when pids.max cannot be set.
  Result<RunCgroup> create(std::string_view run_name, std::uint64_t max_tasks) const;
  // Removes the empty Run cgroups an earlier agent process left (non-empty ones stay: a supervised
  // tofu may still be saving its state there).
  void remove_stale() const;
  // When the agent stops: remove_stale(), and on cgroup v1 also this agent's own parent cgroup
  // when it is empty (the delegated v2 cgroup belongs to the service manager and stays).
  void remove_when_idle() const;

 private:
  PidsCgroups(std::filesystem::path runs_dir, int version) : runs_(std::move(runs_dir)), version_(version) {}
  std::filesystem::path runs_;  // where Run cgroups are created
  int version_ = 2;
};

// One Run's cgroup. Moving a process in: write "0" to procs_file() from that process (the
// launcher's child does, before it executes). Destruction kills what is still inside and removes
// the cgroup (best effort, bounded: call it off the io thread).
class RunCgroup {
 public:
  RunCgroup(RunCgroup&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  RunCgroup& operator=(RunCgroup&&) = delete;
  RunCgroup(const RunCgroup&) = delete;
  ~RunCgroup();

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path procs_file() const { return path_ / "cgroup.procs"; }

 private:
  friend class PidsCgroups;
  explicit RunCgroup(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace takosumi::runner
