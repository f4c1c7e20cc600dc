#pragma once
// The one file that carries a Run across an air gap, either way (docs/air-gapped.md): an index
// and named members, each member's size and sha256 in the index.
//   "takosumi-bundle 1\n" <index length: 16 lowercase hex digits> "\n" <index> <members' bytes>
// The index is the caller's text (a JSON document that lists the members: a Run bundle's job, a
// result's signed document); the members follow in the index's order with nothing between or
// after them. Reading is two steps so that the index can be authenticated before any member costs
// a read: open_bundle reads and bounds the index only, extract_members then copies each member
// to a file, hashing as it copies, and refuses the bundle unless every size and digest matches
// and the file ends exactly after the last member.
// Our own framing rather than tar: a member is a name from the caller's list and bytes, never a
// path, a mode, a link or a device, so there is nothing in it to interpret.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>

#include "common/error.hpp"

namespace takosumi::protocol {

inline constexpr std::size_t kMaxBundleIndexBytes = 8u << 20;

struct BundleMember {
  std::string name;  // [a-z0-9._-]{1,64}, unique in a bundle
  std::uint64_t size = 0;
  std::string sha256;  // lowercase hex
};

// [{"name","size","sha256"}] and back; the reader validates names, digests and uniqueness and
// refuses any name outside `allowed` (errors: bundle_invalid).
boost::json::array to_json(const std::vector<BundleMember>& members);
Result<std::vector<BundleMember>> bundle_members_from_json(const boost::json::value& v,
                                                           const std::vector<std::string>& allowed);

// Each member's size and sha256, read from its file.
Result<std::vector<BundleMember>> describe_members(
    const std::vector<std::pair<std::string, std::filesystem::path>>& files);

// Writes the bundle atomically (temporary sibling, fsync, rename), mode 0600. files must be the
// members the index lists, in its order.
Status write_bundle(const std::filesystem::path& out, std::string_view index,
                    const std::vector<std::pair<std::string, std::filesystem::path>>& files);

struct OpenedBundle {
  std::filesystem::path path;
  std::string index;
  std::uint64_t members_offset = 0;
  std::uint64_t file_size = 0;
};

// bundle_invalid for anything that is not a bundle, or an index over kMaxBundleIndexBytes.
Result<OpenedBundle> open_bundle(const std::filesystem::path& path);

// Copies each member to <dir>/<name> (dir is created 0700; files 0600, never through a symlink)
// and checks it. bundle_invalid naming the member that does not match, or when the file is longer
// or shorter than its members; payload_too_large when the members together exceed max_bytes.
Status extract_members(const OpenedBundle& bundle, const std::vector<BundleMember>& members,
                       const std::filesystem::path& dir, std::uint64_t max_bytes);

}  // namespace takosumi::protocol
