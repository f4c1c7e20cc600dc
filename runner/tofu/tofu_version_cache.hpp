#pragma once
// `tofu version` asked once per binary rather than once per Run (about 50 ms each): the answer is
// kept under the binary's identity — device, inode, size, modification and change times — so a
// binary replaced in place, upgraded by a package or touched is asked again. Shared by every Run
// of an agent (RunnerSettings::tofu_versions); safe to use from several threads.
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace takosumi::runner {

class TofuVersionCache {
 public:
  // The binary's identity now; nullopt when it cannot be read (then nothing is cached).
  struct Identity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};
    timespec changed{};
    bool operator==(const Identity& o) const;
  };
  static std::optional<Identity> identify(const std::filesystem::path& binary);

  // The version remembered for this binary, if its identity is still `now`.
  std::optional<std::string> find(const std::filesystem::path& binary, const Identity& now) const;
  // Remembers what the binary said while it had identity `asked`.
  void remember(const std::filesystem::path& binary, const Identity& asked, std::string version);

 private:
  mutable std::mutex mutex_;
  std::map<std::filesystem::path, std::pair<Identity, std::string>> versions_;
};

}  // namespace takosumi::runner
