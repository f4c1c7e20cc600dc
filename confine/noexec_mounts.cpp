#include "confine/noexec_mounts.hpp"

#include <sched.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace takosumi::confine {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string digits = field.substr(i + 1, 3);
      if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>(std::stoi(digits, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

bool has(const MountEntry& m, const char* option) {
  return std::find(m.options.begin(), m.options.end(), option) != m.options.end();
}

bool at_or_beneath(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

// The flags a remount must repeat so that nothing but noexec changes: the kernel refuses to
// clear a locked flag, and an atime mode left out would mean "relatime".
unsigned long kept_flags(const MountEntry& m) {
  unsigned long flags = 0;
  if (has(m, "ro")) flags |= MS_RDONLY;
  if (has(m, "nosuid")) flags |= MS_NOSUID;
  if (has(m, "nodev")) flags |= MS_NODEV;
  if (has(m, "nodiratime")) flags |= MS_NODIRATIME;
  if (has(m, "nosymfollow")) flags |= MS_NOSYMFOLLOW;
  if (has(m, "noatime"))
    flags |= MS_NOATIME;
  else if (has(m, "relatime"))
    flags |= MS_RELATIME;
  else
    flags |= MS_STRICTATIME;
  return flags;
}

std::expected<std::vector<MountEntry>, std::string> read_mounts() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return std::unexpected(std::string("read /proc/self/mountinfo: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_mountinfo(text.str());
}

}  // namespace

std::vector<MountEntry> parse_mountinfo(const std::string& text) {
  std::vector<MountEntry> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point, options;
    if (!(fields >> id >> parent >> devno >> root >> mount_point >> options)) continue;
    MountEntry entry{unescape(mount_point), {}};
    std::istringstream opts(options);
    for (std::string o; std::getline(opts, o, ',');) entry.options.push_back(o);
    out.push_back(std::move(entry));
  }
  return out;
}

bool needs_noexec(const MountEntry& mount, const std::vector<std::string>& under) {
  if (has(mount, "rw")) return true;
  return std::any_of(under.begin(), under.end(),
                     [&](const std::string& dir) { return at_or_beneath(mount.mount_point, dir); });
}

std::expected<void, std::string> make_mounts_noexec(const std::vector<std::string>& under) {
  if (::unshare(CLONE_NEWNS) != 0)
    return std::unexpected(std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno) +
                           " (the sandbox must grant CAP_SYS_ADMIN in its user namespace)");
  auto mounts = read_mounts();
  if (!mounts) return std::unexpected(mounts.error());
  for (const auto& m : *mounts) {
    if (!needs_noexec(m, under) || has(m, "noexec")) continue;
    const unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOEXEC | kept_flags(m);
    if (::mount(nullptr, m.mount_point.c_str(), nullptr, flags, nullptr) != 0)
      return std::unexpected("remount " + m.mount_point + " noexec: " + std::strerror(errno));
  }
  // The guarantee is what the kernel shows now, not what the calls returned.
  auto after = read_mounts();
  if (!after) return std::unexpected(after.error());
  for (const auto& m : *after)
    if (needs_noexec(m, under) && !has(m, "noexec"))
      return std::unexpected("mount " + m.mount_point + " is still executable after the remount");
  return {};
}

}  // namespace takosumi::confine
