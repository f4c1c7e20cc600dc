#include "runner/tofu/disk_budget.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace takosumi::runner {
namespace {

// Walks one directory (fd owned) and what is beneath it; fails closed: a directory it cannot
// read, or one nested too deep, is a reason to stop the Run, never a part left out.
void walk(int fd, int depth, std::uint64_t max_entries, DiskUsage& usage) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    usage.unreadable = true;
    return;
  }
  while (usage.entries <= max_entries && !usage.unreadable && !usage.too_deep) {
    errno = 0;
    const dirent* e = ::readdir(dir);
    if (e == nullptr) break;
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    ++usage.entries;
    struct stat st {};
    if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Gone since it was listed; anything else (EACCES: a directory that may be listed but not
      // searched, chmod 0400) hides what is in it, and is no part left out.
      if (errno != ENOENT) usage.unreadable = true;
      continue;
    }
    usage.bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
    if (!S_ISDIR(st.st_mode)) continue;
    if (depth >= kMaxWorkspaceDepth) {
      usage.too_deep = true;
      break;
    }
    const int child = ::openat(::dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) {
      if (errno != ENOENT) usage.unreadable = true;  // EACCES (chmod 000), ELOOP (swapped for a link)
      continue;
    }
    walk(child, depth + 1, max_entries, usage);
  }
  ::closedir(dir);
}

}  // namespace

DiskUsage measure_disk_usage(const std::filesystem::path& dir, std::uint64_t max_entries) {
  DiskUsage usage;
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return usage;  // the workspace itself is the agent's: gone means wiped
  walk(fd, 0, max_entries, usage);
  return usage;
}

bool over_budget(const DiskUsage& usage, std::uint64_t max_bytes, std::uint64_t max_entries) {
  return usage.bytes > max_bytes || usage.entries > max_entries || usage.unreadable || usage.too_deep;
}

}  // namespace takosumi::runner
