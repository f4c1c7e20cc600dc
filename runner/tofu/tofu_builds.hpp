#pragma once
// The OpenTofu builds of an agent's tofu.versionsDir (docs/configuration.md): one directory per
// build, named by its version, holding the `tofu` executable — <versionsDir>/1.10.6/tofu. The
// directory's name is what selection reads (no build is executed to choose); the Run then asks
// the chosen build its version and checks that too (RunFlow).
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "protocol/version_constraint.hpp"

namespace takosumi::runner {

struct TofuBuild {
  std::string name;  // the directory's name
  protocol::TofuVersion version;
  std::filesystem::path binary;  // <versionsDir>/<name>/tofu
};

struct TofuBuildList {
  std::vector<TofuBuild> builds;     // newest first
  std::vector<std::string> skipped;  // "<name>: why", for the operator
};

// The first 256 entries by name are read; a name that is not a version, or a directory without a
// regular executable `tofu`, is skipped with the reason. io_error when the directory cannot be
// listed or holds more than 4096 entries.
Result<TofuBuildList> list_tofu_builds(const std::filesystem::path& dir);
// The builds' names, newest first: the first 16 and how many more; "none" without any.
std::string list_names(const TofuBuildList& list);

// One constraint a Run's OpenTofu must satisfy, and where it comes from ("main.tf:3:
// required_version", "the Capsule's opentofuVersion"), for messages.
struct VersionRequirement {
  std::string where;
  protocol::VersionConstraint constraint;
};
// "where \"constraint\" and ...", the first four and how many more.
std::string describe(const std::vector<VersionRequirement>& requirements);

// The newest build whose name satisfies every requirement; opentofu_version_unavailable naming
// the requirements and the versions the list has.
Result<TofuBuild> select_tofu_build(const TofuBuildList& list,
                                    const std::vector<VersionRequirement>& requirements);
// The build of this name (an apply's: the one its plan ran); opentofu_version_unavailable when
// the list has none such, naming what it has.
Result<TofuBuild> find_tofu_build(const TofuBuildList& list, std::string_view name);

}  // namespace takosumi::runner
