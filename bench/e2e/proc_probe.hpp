#pragma once
// What /proc and the filesystem say about a running process and what it left on disk.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>

namespace takosumi::bench {

// VmRSS of pid in KiB; -1 when the process or the field is gone.
std::int64_t rss_kib(pid_t pid);
// utime + stime of pid in clock ticks (sysconf(_SC_CLK_TCK) per second); -1 when gone.
std::int64_t cpu_ticks(pid_t pid);
// True once pid has exited (a zombie not yet reaped, or gone): the moment it stopped running.
bool has_exited(pid_t pid);
// Bytes of all regular files under dir (0 when dir is missing).
std::uint64_t bytes_under(const std::filesystem::path& dir);

}  // namespace takosumi::bench
