#pragma once
// A cgroup per Run, for the limits that bind everything the Run starts together, whatever its
// user: the pids controller (limits.maxProcesses: every task, threads too) and, where the agent
// may manage it, the memory controller (limits.memoryMiB: the whole process tree, tmpfs pages it
// writes included; the Run is killed as one when it goes past). Used where this process may manage
// cgroups: a delegated cgroup v2 subtree (systemd `Delegate=pids memory`), or writable cgroup v1
// pids (and memory) hierarchies (a root agent on a v1 host). Elsewhere the process limit falls back
// to RLIMIT_NPROC inside the Run's user namespace (takosumi-confine), which binds a non-root agent
// only, and the memory limit to RLIMIT_AS per process.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace takosumi::runner {

class RunCgroup;

struct RunCgroupLimits {
  std::uint64_t max_tasks = 0;                // pids.max; 0: none
  std::optional<std::uint64_t> memory_bytes;  // memory.max (v1: memory.limit_in_bytes)
};

class RunCgroups {
 public:
  // Finds a pids controller this process can give Runs cgroups in: cgroup v2 when the agent runs
  // in a leaf "agent" of a delegated cgroup (systemd Delegate=pids memory, DelegateSubgroup=agent)
  // — Run cgroups are its siblings —, else writable cgroup v1 hierarchies, where the Run cgroups
  // go under "takosumi/<instance>" (a v1 hierarchy is shared by every agent on the host; instance
  // names this agent installation, stable across restarts). The memory controller is used when it
  // is there too. With prepare it enables the controllers below the delegated cgroup (v2) or
  // creates the parents (v1); without it (--check-config) it changes nothing. not_found when there
  // is no pids controller to use, with a message saying why.
  static Result<RunCgroups> open(bool prepare, std::string_view instance);

  // "cgroup v2 /sys/fs/cgroup/…" or "cgroup v1 /sys/fs/cgroup/pids/…", for logs.
  std::string describe() const;
  // Whether Runs' memory is limited by the cgroup (else RLIMIT_AS per process).
  bool limits_memory() const;
  // A new cgroup for one Run (a leftover of the same name is removed first). io_error, or
  // sandbox_failed when a limit cannot be set.
  Result<RunCgroup> create(std::string_view run_name, const RunCgroupLimits& limits) const;
  // Removes the empty Run cgroups an earlier agent process left (non-empty ones stay: a supervised
  // tofu may still be saving its state there).
  void remove_stale() const;
  // When the agent stops: remove_stale(), and on cgroup v1 also this agent's own parent cgroups
  // when they are empty (the delegated v2 cgroup belongs to the service manager and stays).
  void remove_when_idle() const;

 private:
  // Where Run cgroups are created: one directory (v2), or one per controller (v1).
  struct Hierarchy {
    std::filesystem::path runs;
    bool pids = false;
    bool memory = false;
  };
  RunCgroups(std::vector<Hierarchy> hierarchies, int version)
      : hierarchies_(std::move(hierarchies)), version_(version) {}
  std::vector<Hierarchy> hierarchies_;
  int version_ = 2;
};

// One Run's cgroup (on v1, its directory in each hierarchy). Moving a process in: write "0" to each
// of procs_files() from that process (the launcher's child does, before it executes). Destruction
// kills what is still inside and removes the cgroup (best effort, bounded: call it off the io
// thread).
class RunCgroup {
 public:
  RunCgroup(RunCgroup&& other) noexcept : paths_(std::exchange(other.paths_, {})) {}
  RunCgroup& operator=(RunCgroup&&) = delete;
  RunCgroup(const RunCgroup&) = delete;
  ~RunCgroup();

  const std::filesystem::path& path() const { return paths_.front(); }
  std::vector<std::filesystem::path> procs_files() const;
  // How often the kernel killed a member for the memory limit (memory.events oom_kill; v1
  // memory.oom_control oom_kill); 0 without a memory limit.
  std::uint64_t oom_kills() const;

 private:
  friend class RunCgroups;
  explicit RunCgroup(std::vector<std::filesystem::path> paths) : paths_(std::move(paths)) {}
  std::vector<std::filesystem::path> paths_;
};

// A Run's cgroup, when its limits need one (limits.maxProcesses, and limits.memoryMiB where the
// memory controller is delegated too): created under cgroups for run_name. Without cgroups there
// is none, and where the agent runs as root warnings says that RLIMIT_NPROC does not bind it.
// Blocking (it writes the cgroup's files).
Result<std::optional<RunCgroup>> make_run_cgroup(const std::optional<RunCgroups>& cgroups,
                                                 std::string_view run_name, std::uint64_t max_processes,
                                                 std::uint64_t memory_bytes, bool running_as_root,
                                                 std::vector<std::string>& warnings);

}  // namespace takosumi::runner
