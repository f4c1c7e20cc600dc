#pragma once
// What /proc and the filesystem say about a running process and what it left on disk.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>

namespace takosumi::bench {

// A process's memory four ways, in KiB, from /proc/<pid>/smaps_rollup: rss counts every shared
// library page it maps (libcrypto alone is about 3.4 MiB of an idle agent's), pss divides each shared
// page among the processes mapping it, uss (Private_Clean + Private_Dirty) is what only this
// process holds: what it would give back on exit (its own binary's pages are in it: no other
// process maps them), anon is the part of that which is heap, stacks and arenas, what grows
// with the work. All -1 when the process or the file is gone.
struct MemoryKib {
  std::int64_t rss = -1;
  std::int64_t pss = -1;
  std::int64_t uss = -1;
  std::int64_t anon = -1;
};
MemoryKib memory_kib(pid_t pid);
// utime + stime of pid in clock ticks (sysconf(_SC_CLK_TCK) per second); -1 when gone.
std::int64_t cpu_ticks(pid_t pid);
// True once pid has exited (a zombie not yet reaped, or gone): the moment it stopped running.
bool has_exited(pid_t pid);
// Bytes of all regular files under dir (0 when dir is missing).
std::uint64_t bytes_under(const std::filesystem::path& dir);

}  // namespace takosumi::bench
