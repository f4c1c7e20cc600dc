#include "runner/tofu/disk_budget.hpp"

#include <sys/stat.h>

namespace takosumi::runner {

DiskUsage measure_disk_usage(const std::filesystem::path& dir, std::uint64_t max_entries) {
  namespace fs = std::filesystem;
  DiskUsage usage;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (++usage.entries > max_entries) break;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    usage.bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  return usage;
}

}  // namespace takosumi::runner
