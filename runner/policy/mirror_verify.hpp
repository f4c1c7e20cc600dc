#pragma once
// Checks a provider mirror against an operator's pinned list (provider_pins.hpp) before anything
// in it may run: every package must be pinned, at its version, with the hash it has now. The
// mirror's layouts are OpenTofu's filesystem_mirror ones:
//   <host>/<namespace>/<type>/<version>/<os>_<arch>/…                          (unpacked)
//   <host>/<namespace>/<type>/terraform-provider-<type>_<version>_<os>_<arch>.zip  (packed)
// plus the index files `tofu providers mirror` writes beside packed packages (<type>/*.json),
// which tofu's filesystem mirror does not read. Anything else there is a problem too: whoever can
// write the mirror is who this guards against.
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "runner/policy/package_hash.hpp"
#include "runner/policy/provider_pins.hpp"

namespace takosumi::runner {

struct MirrorPackage {
  std::string address;   // host/namespace/type, lower case
  std::string version;
  std::string platform;  // os_arch
  std::filesystem::path path;
  bool packed = false;
};

// The packages of the mirror, in path order; the problems of its layout in `problems`.
struct MirrorListing {
  std::vector<MirrorPackage> packages;
  std::vector<std::string> problems;
};
Result<MirrorListing> list_mirror(const std::filesystem::path& mirror);

// Every package checked against pins (unpacked by h1:, packed by zh:). OK when there is no
// problem; provider_checksum_mismatch naming each problem otherwise (at most the first 20, and
// how many more), so one check says everything to fix.
// With a cache, an unchanged package is not hashed again.
Result<std::size_t> verify_mirror(const std::filesystem::path& mirror,
                                  const std::vector<ProviderPin>& pins,
                                  PackageHashCache* cache = nullptr);

}  // namespace takosumi::runner
