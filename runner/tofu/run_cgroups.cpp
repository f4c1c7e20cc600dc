#include "runner/tofu/run_cgroups.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kRunPrefix = "run-";

struct MountEntry {
  std::string root;        // the mount's own root within its file system
  std::string mountpoint;
  std::string fstype;
  std::string super_options;
};

std::vector<MountEntry> read_mounts() {
  std::vector<MountEntry> out;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mountpoint, options, word;
    fields >> id >> parent >> devno >> root >> mountpoint >> options;
    while (fields >> word && word != "-") {}
    MountEntry e{root, mountpoint, "", ""};
    fields >> e.fstype >> word >> e.super_options;
    out.push_back(std::move(e));
  }
  return out;
}

// The path of this process's cgroup in hierarchy `key` ("" for v2, "pids" for v1).
std::optional<std::string> own_cgroup(std::string_view key) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
    const bool match = key.empty() ? line.starts_with("0::")
                                   : ("," + std::string(controllers) + ",").find("," + std::string(key) + ",") != std::string::npos;
    if (match) return line.substr(second + 1);
  }
  return std::nullopt;
}

// The directory of cgroup `path` under a mount of the hierarchy whose root is `root`.
std::optional<fs::path> cgroup_dir(const MountEntry& m, const std::string& path) {
  const fs::path rel = fs::path(path).lexically_relative(m.root);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return (fs::path(m.mountpoint) / rel).lexically_normal();
}

bool contains_word(const fs::path& file, std::string_view word) {
  auto text = read_file(file, 4096);
  if (!text) return false;
  std::istringstream words(*text);
  for (std::string w; words >> w;)
    if (w == word) return true;
  return false;
}

Status write_text(const fs::path& file, std::string_view text) {
  std::ofstream out(file);
  out << text;
  out.flush();
  if (!out) return fail(errc::kIoError, "write " + file.string() + ": refused");
  return {};
}

// Cgroups that hold processes cannot have controllers for their children (v2), and a service
// manager starts the next agent in the cgroup it delegated: the agent never moves itself. It uses
// the delegated cgroup only when it already runs in a leaf "agent" of it (systemd:
// DelegateSubgroup=agent), and enables pids (and memory, when delegated too) there.
Result<fs::path> prepare_v2(const fs::path& own, bool prepare, bool& memory) {
  if (own.filename() != "agent")
    return fail(errc::kNotFound, "cgroup v2 " + own.string() + " is the agent's own; Run cgroups "
                                 "need it to run in a delegated leaf named agent (systemd "
                                 "Delegate=pids memory with DelegateSubgroup=agent)");
  const fs::path delegated = own.parent_path();
  if (!contains_word(delegated / "cgroup.controllers", "pids"))
    return fail(errc::kNotFound, "cgroup v2 " + delegated.string() + " has no pids controller "
                                 "(delegate it: systemd Delegate=pids memory)");
  if (::access(delegated.c_str(), W_OK) != 0 ||
      ::access((delegated / "cgroup.subtree_control").c_str(), W_OK) != 0)
    return fail(errc::kNotFound, "cgroup v2 " + delegated.string() + " is not delegated to this process");
  for (const char* controller : {"pids", "memory"}) {
    const bool offered = contains_word(delegated / "cgroup.controllers", controller);
    if (!offered) continue;
    if (prepare && !contains_word(delegated / "cgroup.subtree_control", controller))
      if (auto enabled = write_text(delegated / "cgroup.subtree_control", std::string("+") + controller);
          !enabled && std::string_view(controller) == "pids")
        return fail(errc::kNotFound, "cgroup v2: cannot enable pids below " + delegated.string());
  }
  memory = contains_word(delegated / "cgroup.controllers", "memory") &&
           (!prepare || contains_word(delegated / "cgroup.subtree_control", "memory"));
  return delegated;
}

Result<fs::path> find_v2(const std::vector<MountEntry>& mounts, bool prepare, bool& memory) {
  auto path = own_cgroup("");
  if (!path) return fail(errc::kNotFound, "no cgroup v2 membership");
  for (const auto& m : mounts)
    if (m.fstype == "cgroup2")
      if (auto dir = cgroup_dir(m, *path)) return prepare_v2(*dir, prepare, memory);
  return fail(errc::kNotFound, "cgroup v2 is not mounted");
}

// The agent's directory "takosumi/<instance>" in the writable cgroup v1 hierarchy of controller.
Result<fs::path> find_v1(const std::vector<MountEntry>& mounts, bool prepare,
                         std::string_view instance, const std::string& controller) {
  auto path = own_cgroup(controller);
  if (!path) return fail(errc::kNotFound, "no cgroup v1 " + controller + " hierarchy");
  for (const auto& m : mounts) {
    if (m.fstype != "cgroup" || ("," + m.super_options + ",").find("," + controller + ",") == std::string::npos)
      continue;
    auto dir = cgroup_dir(m, *path);
    if (!dir) continue;
    if (::access(dir->c_str(), W_OK) != 0)
      return fail(errc::kNotFound, "cgroup v1 " + controller + " " + dir->string() + " is not writable");
    const fs::path runs = *dir / "takosumi" / std::string(instance);
    std::error_code ec;
    if (prepare) fs::create_directories(runs, ec);
    if (ec) return fail(errc::kNotFound, "cgroup v1: cannot create " + runs.string() + ": " + ec.message());
    return runs;
  }
  return fail(errc::kNotFound, "cgroup v1 " + controller + " is not mounted");
}

void kill_members(const fs::path& cgroup) {
  if (fs::exists(cgroup / "cgroup.kill")) (void)write_text(cgroup / "cgroup.kill", "1");
  std::ifstream in(cgroup / "cgroup.procs");
  for (pid_t pid; in >> pid;)
    if (pid > 0) ::kill(pid, SIGKILL);
}

// The number after `key` in a "key value" file (memory.events, memory.oom_control).
std::uint64_t counter(const fs::path& file, std::string_view key) {
  std::ifstream in(file);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

Status set_memory(const fs::path& dir, std::uint64_t bytes, int version) {
  const std::string value = std::to_string(bytes);
  const fs::path max = dir / (version == 2 ? "memory.max" : "memory.limit_in_bytes");
  if (!write_text(max, value))
    return fail(errc::kSandboxFailed, "limits.memoryMiB: cannot set " + max.string());
  // No swapping around the limit. Not memory.oom.group: the kernel kills the process that grew
  // (a provider, most often), and tofu lives on to write what an apply already changed into the
  // state; killing the whole Run at once would lose it.
  std::error_code ec;
  if (version == 2) {
    if (fs::exists(dir / "memory.swap.max", ec)) (void)write_text(dir / "memory.swap.max", "0");
  } else if (fs::exists(dir / "memory.memsw.limit_in_bytes", ec)) {
    (void)write_text(dir / "memory.memsw.limit_in_bytes", value);
  }
  return {};
}

}  // namespace

Result<RunCgroups> RunCgroups::open(bool prepare, std::string_view instance) {
  const auto mounts = read_mounts();
  bool memory = false;
  auto v2 = find_v2(mounts, prepare, memory);
  if (v2) return RunCgroups({Hierarchy{*v2, true, memory}}, 2);
  auto pids = find_v1(mounts, prepare, instance, "pids");
  if (!pids) return fail(errc::kNotFound, v2.error().message + "; " + pids.error().message);
  std::vector<Hierarchy> hierarchies{Hierarchy{*pids, true, false}};
  if (auto mem = find_v1(mounts, prepare, instance, "memory")) hierarchies.push_back(Hierarchy{*mem, false, true});
  return RunCgroups(std::move(hierarchies), 1);
}

std::string RunCgroups::describe() const {
  std::string out = "cgroup v" + std::to_string(version_) + " " + hierarchies_.front().runs.string();
  for (std::size_t i = 1; i < hierarchies_.size(); ++i) out += ", " + hierarchies_[i].runs.string();
  return out + (limits_memory() ? " (tasks and memory)" : " (tasks; memory by RLIMIT_AS)");
}

bool RunCgroups::limits_memory() const {
  return std::any_of(hierarchies_.begin(), hierarchies_.end(), [](const Hierarchy& h) { return h.memory; });
}

Result<RunCgroup> RunCgroups::create(std::string_view run_name, const RunCgroupLimits& limits) const {
  std::vector<fs::path> dirs;
  for (const auto& h : hierarchies_) dirs.push_back(h.runs / (std::string(kRunPrefix) + std::string(run_name)));
  std::error_code ec;
  for (const auto& dir : dirs)
    if (fs::exists(dir, ec)) {
      RunCgroup leftover({dir});  // killed and removed as it goes
    }
  std::vector<fs::path> made;
  for (const auto& dir : dirs) {
    if (!fs::create_directory(dir, ec) || ec) {
      RunCgroup undo(std::move(made));
      return fail(errc::kIoError, "create cgroup " + dir.string() + ": " +
                                      (ec ? ec.message() : std::string("it still exists")));
    }
    made.push_back(dir);
  }
  RunCgroup cgroup(std::move(made));
  for (std::size_t i = 0; i < hierarchies_.size(); ++i) {
    const auto& h = hierarchies_[i];
    if (h.pids && limits.max_tasks > 0)
      if (!write_text(dirs[i] / "pids.max", std::to_string(limits.max_tasks)))
        return fail(errc::kSandboxFailed, "limits.maxProcesses: cannot set " + (dirs[i] / "pids.max").string());
    if (h.memory && limits.memory_bytes) TAKOSUMI_TRY(set_memory(dirs[i], *limits.memory_bytes, version_));
  }
  return cgroup;
}

void RunCgroups::remove_stale() const {
  std::error_code ec;
  for (const auto& h : hierarchies_)
    for (const auto& entry : fs::directory_iterator(h.runs, ec))
      if (entry.path().filename().string().starts_with(kRunPrefix)) ::rmdir(entry.path().c_str());
}

void RunCgroups::remove_when_idle() const {
  remove_stale();
  if (version_ == 1)
    for (const auto& h : hierarchies_) ::rmdir(h.runs.c_str());
}

std::vector<fs::path> RunCgroup::procs_files() const {
  std::vector<fs::path> out;
  for (const auto& p : paths_) out.push_back(p / "cgroup.procs");
  return out;
}

std::uint64_t RunCgroup::oom_kills() const {
  std::uint64_t kills = 0;
  for (const auto& p : paths_) {
    kills += counter(p / "memory.events", "oom_kill");
    kills += counter(p / "memory.oom_control", "oom_kill");
  }
  return kills;
}

RunCgroup::~RunCgroup() {
  // What the launcher's group kill missed (a process that left tofu's process group). The kernel
  // needs a moment to empty the cgroup after SIGKILL.
  for (const auto& path : paths_)
    for (int attempt = 0; attempt < 50; ++attempt) {
      kill_members(path);
      if (::rmdir(path.c_str()) == 0 || errno == ENOENT) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

Result<std::optional<RunCgroup>> make_run_cgroup(const std::optional<RunCgroups>& cgroups,
                                                 std::string_view run_name, std::uint64_t max_processes,
                                                 std::uint64_t memory_bytes, bool running_as_root,
                                                 std::vector<std::string>& warnings) {
  const bool cgroup_memory = cgroups && cgroups->limits_memory() && memory_bytes > 0;
  if (max_processes == 0 && !cgroup_memory) return std::optional<RunCgroup>{};
  if (!cgroups) {
    // RLIMIT_NPROC (set by takosumi-confine) does not bind root: the kernel exempts it.
    if (running_as_root)
      warnings.push_back("warning: limits.maxProcesses is not enforced: the agent runs as root and has "
                         "no writable pids cgroup (delegate one, e.g. systemd Delegate=pids, or run as "
                         "an unprivileged user)");
    return std::optional<RunCgroup>{};
  }
  RunCgroupLimits limits{max_processes, std::nullopt};
  if (cgroup_memory) limits.memory_bytes = memory_bytes;
  auto cgroup = cgroups->create(run_name, limits);
  if (!cgroup) return std::unexpected(cgroup.error());
  return std::optional<RunCgroup>(std::move(*cgroup));
}

}  // namespace takosumi::runner
