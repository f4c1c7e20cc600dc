#pragma once
// OpenTofu versions and version constraints, read as OpenTofu reads a module's
// `required_version` (HashiCorp's go-version syntax): "1.9.0", "v1.10", "1.11.0-beta1"; a
// constraint is a comma-separated list, all of which must hold, of [op] version with op one of
// = != > >= < <= ~> (none is =); `~> 1.2` means >= 1.2, < 2.0 (`~> 1.2.3`: < 1.3.0). As in
// OpenTofu, a constraint may not name a prerelease, and a version is checked by its release alone
// (1.11.0-beta1 satisfies >= 1.11). Used for a Capsule's opentofuVersion and to pick a build from
// an agent's tofu.versionsDir.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace takosumi::protocol {

struct TofuVersion {
  std::vector<std::int64_t> segments;  // at least 3: "1.9" is 1.9.0
  std::size_t specified = 0;           // how many the text gave ("~> 1.9" needs it)
  std::string prerelease;              // "beta1" of 1.11.0-beta1; "" for a release
  std::string text;                    // as given
};

// Orders by segments, then a release after its prereleases, then prereleases by their
// dot-separated parts (numeric ones numerically, below alphanumeric ones). Build metadata is
// ignored.
int compare(const TofuVersion& a, const TofuVersion& b);

struct VersionConstraint {
  struct Part {
    std::string op;  // "=", "!=", ">", ">=", "<", "<=", "~>"
    TofuVersion version;
  };
  std::vector<Part> parts;
  std::string text;  // as given
};

// Errors are invalid_argument naming the text (printable ASCII only, the rest as \xNN, and cut
// at 64 bytes) and what is wrong with it; at most 256 bytes.
Result<TofuVersion> parse_tofu_version(std::string_view text);
Result<VersionConstraint> parse_version_constraint(std::string_view text);

// By v's release: its prerelease is not looked at, as OpenTofu checks its own version.
bool satisfies(const TofuVersion& v, const VersionConstraint& c);

}  // namespace takosumi::protocol
