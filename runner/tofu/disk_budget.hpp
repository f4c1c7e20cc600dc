#pragma once
// What a Run may keep in its workspace (limits.workspaceMiB), and how much it keeps: the allocated
// blocks of every file beneath the directory (links not followed, so the mirror's providers do not
// count), measured while a command runs. No single file passes the budget at all (RLIMIT_FSIZE,
// ProcessLimits::file_size_bytes); this catches many files together, within one check's interval.
#include <chrono>
#include <cstdint>
#include <filesystem>

namespace takosumi::runner {

struct DiskBudget {
  std::filesystem::path dir;
  std::uint64_t max_bytes = 0;
};

inline constexpr auto kWorkspaceCheck = std::chrono::milliseconds(250);
// A workspace of more entries is over budget whatever their size: the walk itself must stay cheap.
inline constexpr std::uint64_t kMaxWorkspaceEntries = 250'000;

struct DiskUsage {
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;
};

// Stops counting at max_entries + 1. Entries that vanish while it walks are skipped. Blocking.
DiskUsage measure_disk_usage(const std::filesystem::path& dir, std::uint64_t max_entries);

}  // namespace takosumi::runner
