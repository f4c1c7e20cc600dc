#include "runner/tofu/tofu_version_cache.hpp"

namespace takosumi::runner {
namespace {

bool same_time(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

bool TofuVersionCache::Identity::operator==(const Identity& o) const {
  return device == o.device && inode == o.inode && size == o.size &&
         same_time(modified, o.modified) && same_time(changed, o.changed);
}

std::optional<TofuVersionCache::Identity> TofuVersionCache::identify(
    const std::filesystem::path& binary) {
  struct stat st {};
  if (::stat(binary.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return Identity{st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
}

std::optional<std::string> TofuVersionCache::find(const std::filesystem::path& binary,
                                                  const Identity& now) const {
  std::lock_guard lock(mutex_);
  auto it = versions_.find(binary);
  if (it == versions_.end() || !(it->second.first == now)) return std::nullopt;
  return it->second.second;
}

void TofuVersionCache::remember(const std::filesystem::path& binary, const Identity& asked,
                                std::string version) {
  std::lock_guard lock(mutex_);
  versions_.insert_or_assign(binary, std::pair{asked, std::move(version)});
}

}  // namespace takosumi::runner
