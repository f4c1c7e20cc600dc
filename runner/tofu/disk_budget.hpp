#pragma once
// What a Run may keep in its workspace (limits.workspaceMiB), and how much it keeps: the allocated
// blocks of every file beneath the directory (links not followed, so the mirror's providers do not
// count), measured while a command runs. No single file passes the budget at all (RLIMIT_FSIZE,
// ProcessLimits::file_size_bytes); this catches many files together, within one check's interval.
// A file deleted while a process keeps it open is not seen: with workDir on tmpfs (the unit's
// default) and the memory controller delegated, its pages still count against the Run's memory.
#include <chrono>
#include <cstdint>
#include <filesystem>

namespace takosumi::runner {

struct DiskBudget {
  std::filesystem::path dir;
  std::uint64_t max_bytes = 0;
};

inline constexpr auto kWorkspaceCheck = std::chrono::milliseconds(250);
// A workspace of more entries, or nested deeper, is over budget whatever its size: the walk itself
// must stay cheap (one descriptor per level).
inline constexpr std::uint64_t kMaxWorkspaceEntries = 250'000;
inline constexpr int kMaxWorkspaceDepth = 64;

struct DiskUsage {
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;
  bool unreadable = false;  // a directory the agent cannot read (chmod 000): not counted, so over
  bool too_deep = false;
};

// Stops counting at max_entries + 1. Entries that vanish while it walks are skipped; a directory
// that cannot be opened for another reason makes the usage unreadable. Blocking.
DiskUsage measure_disk_usage(const std::filesystem::path& dir, std::uint64_t max_entries);
// What the watcher refuses: past the bytes or the entries, or not measurable.
bool over_budget(const DiskUsage& usage, std::uint64_t max_bytes, std::uint64_t max_entries);

}  // namespace takosumi::runner
