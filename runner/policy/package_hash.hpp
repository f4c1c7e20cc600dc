#pragma once
// The hashes OpenTofu records for a provider package in a dependency lock file
// (.terraform.lock.hcl) and in a mirror's index, so an operator's pinned list can be checked
// against what is on disk:
// - "h1:" of an unpacked package directory: Go's dirhash.Hash1 as OpenTofu's PackageHashV1 uses
//   it. Each regular file's SHA-256 as lowercase hex, two spaces and its path relative to the
//   directory (forward slashes), one line each, sorted by path as bytes; the SHA-256 of those
//   lines, standard base64.
// - "zh:" of a packed package (.zip): the SHA-256 of the file as lowercase hex.
// A package is attacker-reachable input (whoever could write the mirror): anything but regular
// files and directories inside it (a symlink, a device, a name with a newline) is refused rather
// than hashed, since what tofu would load through it is not what was hashed.
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::runner {

// A path or name from the mirror as a message may show it: every byte but printable ASCII as \xNN,
// so a file name cannot break a log line, forge one, or send terminal escapes.
std::string shown_name(std::string_view name);

// provider_checksum_mismatch for what a package may not hold; not_found / io errors otherwise.
Result<std::string> package_hash_h1(const std::filesystem::path& package_dir);
Result<std::string> package_hash_zh(const std::filesystem::path& package_zip);
// package_hash_zh of a packed package, package_hash_h1 of an unpacked one.
Result<std::string> package_hash(const std::filesystem::path& package, bool packed);

// A package's hash computed once per identity rather than once per Run (a provider binary is tens
// of MiB): the identity is every file's path, device, inode, size, modification and change time
// (a change time cannot be set back), so a package altered in any way is hashed again. Shared by
// every Run of an agent; safe from several threads.
class PackageHashCache {
 public:
  // package_hash_h1 (a directory) or package_hash_zh (a .zip), from the cache when the package's
  // identity is the one it had when hashed.
  Result<std::string> hash(const std::filesystem::path& package, bool packed);

 private:
  std::mutex mutex_;
  std::map<std::filesystem::path, std::pair<std::string, std::string>> hashes_;  // identity, hash
};

}  // namespace takosumi::runner
