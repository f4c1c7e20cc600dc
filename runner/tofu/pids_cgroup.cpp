#include "runner/tofu/pids_cgroup.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "protocol/failure_codes.hpp"

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
// DelegateSubgroup=agent), and enables pids there.
Result<fs::path> prepare_v2(const fs::path& own, bool prepare) {
  if (own.filename() != "agent")
    return fail(errc::kNotFound, "cgroup v2 " + own.string() + " is the agent's own; Run cgroups "
                                 "need it to run in a delegated leaf named agent (systemd "
                                 "Delegate=pids with DelegateSubgroup=agent)");
  const fs::path delegated = own.parent_path();
  if (!contains_word(delegated / "cgroup.controllers", "pids"))
    return fail(errc::kNotFound, "cgroup v2 " + delegated.string() + " has no pids controller "
                                 "(delegate it: systemd Delegate=pids)");
  if (::access(delegated.c_str(), W_OK) != 0 ||
      ::access((delegated / "cgroup.subtree_control").c_str(), W_OK) != 0)
    return fail(errc::kNotFound, "cgroup v2 " + delegated.string() + " is not delegated to this process");
  if (prepare && !contains_word(delegated / "cgroup.subtree_control", "pids"))
    if (auto enabled = write_text(delegated / "cgroup.subtree_control", "+pids"); !enabled)
      return fail(errc::kNotFound, "cgroup v2: cannot enable pids below " + delegated.string());
  return delegated;
}

Result<fs::path> find_v2(const std::vector<MountEntry>& mounts, bool prepare) {
  auto path = own_cgroup("");
  if (!path) return fail(errc::kNotFound, "no cgroup v2 membership");
  for (const auto& m : mounts)
    if (m.fstype == "cgroup2")
      if (auto dir = cgroup_dir(m, *path)) return prepare_v2(*dir, prepare);
  return fail(errc::kNotFound, "cgroup v2 is not mounted");
}

Result<fs::path> find_v1(const std::vector<MountEntry>& mounts, bool prepare,
                         std::string_view instance) {
  auto path = own_cgroup("pids");
  if (!path) return fail(errc::kNotFound, "no cgroup v1 pids hierarchy");
  for (const auto& m : mounts) {
    if (m.fstype != "cgroup" || ("," + m.super_options + ",").find(",pids,") == std::string::npos) continue;
    auto dir = cgroup_dir(m, *path);
    if (!dir) continue;
    if (::access(dir->c_str(), W_OK) != 0)
      return fail(errc::kNotFound, "cgroup v1 pids " + dir->string() + " is not writable");
    const fs::path runs = *dir / "takosumi" / std::string(instance);
    std::error_code ec;
    if (prepare) fs::create_directories(runs, ec);
    if (ec) return fail(errc::kNotFound, "cgroup v1: cannot create " + runs.string() + ": " + ec.message());
    return runs;
  }
  return fail(errc::kNotFound, "cgroup v1 pids is not mounted");
}

void kill_members(const fs::path& cgroup) {
  if (fs::exists(cgroup / "cgroup.kill")) (void)write_text(cgroup / "cgroup.kill", "1");
  std::ifstream in(cgroup / "cgroup.procs");
  for (pid_t pid; in >> pid;)
    if (pid > 0) ::kill(pid, SIGKILL);
}

}  // namespace

Result<PidsCgroups> PidsCgroups::open(bool prepare, std::string_view instance) {
  const auto mounts = read_mounts();
  auto v2 = find_v2(mounts, prepare);
  if (v2) return PidsCgroups(*v2, 2);
  auto v1 = find_v1(mounts, prepare, instance);
  if (v1) return PidsCgroups(*v1, 1);
  return fail(errc::kNotFound, v2.error().message + "; " + v1.error().message);
}

std::string PidsCgroups::describe() const {
  return "cgroup v" + std::to_string(version_) + " " + runs_.string();
}

Result<RunCgroup> PidsCgroups::create(std::string_view run_name, std::uint64_t max_tasks) const {
  const fs::path dir = runs_ / (std::string(kRunPrefix) + std::string(run_name));
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    RunCgroup leftover(dir);  // killed and removed as it goes
  }
  if (!fs::create_directory(dir, ec) || ec)
    return fail(errc::kIoError, "create cgroup " + dir.string() + ": " +
                                    (ec ? ec.message() : std::string("it still exists")));
  RunCgroup cgroup(dir);
  if (auto limited = write_text(dir / "pids.max", std::to_string(max_tasks)); !limited)
    return fail(errc::kSandboxFailed, "limits.maxProcesses: cannot set " + (dir / "pids.max").string());
  return cgroup;
}

void PidsCgroups::remove_stale() const {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(runs_, ec))
    if (entry.path().filename().string().starts_with(kRunPrefix)) ::rmdir(entry.path().c_str());
}

void PidsCgroups::remove_when_idle() const {
  remove_stale();
  if (version_ == 1) ::rmdir(runs_.c_str());
}

RunCgroup::~RunCgroup() {
  if (path_.empty()) return;
  // What the launcher's group kill missed (a process that left tofu's process group). The kernel
  // needs a moment to empty the cgroup after SIGKILL.
  for (int attempt = 0; attempt < 50; ++attempt) {
    kill_members(path_);
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace takosumi::runner
