#pragma once
// Which OpenTofu a Run uses, and the check of what that build says it is: a step of the Run in
// explicit values (what it reads: the manifest, the module's required_version literals, the
// agent's builds; what it gives: the binary, the build's name, the constraints), so it is tested
// and read without the rest of the Run.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "protocol/job_manifest.hpp"
#include "runner/policy/module_policy.hpp"
#include "runner/tofu/tofu_builds.hpp"

namespace takosumi::runner {

// What the agent offers and the module asks for.
struct TofuChoiceInputs {
  std::filesystem::path tofu_binary;   // tofu.binary
  std::filesystem::path versions_dir;  // tofu.versionsDir, empty without
  // Where the exec allowlist is enforced it never grants tofu the dynamic loader: a build chosen
  // must then be statically linked.
  bool static_only = false;
  // The working directory's required_version literals as the policy scan before init read them,
  // and whether there were more than it keeps (ModuleScan::kMaxRequiredVersions).
  std::vector<ModuleScan::RequiredVersion> required_versions;
  bool required_versions_cut = false;
};

struct TofuChoice {
  std::filesystem::path binary;                  // what the Run's tofu commands execute
  std::string build;                             // the tofu.versionsDir build's name; empty: tofu.binary
  std::vector<VersionRequirement> requirements;  // what its version must satisfy
  std::string said;                              // a line for the Run's log, empty when nothing is chosen
};

// The Capsule's opentofuVersion and the module's required_version literals. Without a
// tofu.versionsDir a literal this agent cannot read is left to OpenTofu's own check at init.
Result<std::vector<VersionRequirement>> version_requirements(const protocol::JobManifest& manifest,
                                                             const TofuChoiceInputs& inputs);

// tofu.binary, unless the Run has version constraints and the agent a tofu.versionsDir: then the
// newest build there whose name satisfies them all. An apply uses the build its plan ran, whatever
// the constraints say now (OpenTofu applies a saved plan only with the version that made it).
// Lists the directory when it has to choose: call it off the Run's event loop.
// opentofu_version_unavailable naming what was asked and what there is.
Result<TofuChoice> choose_tofu(const protocol::JobManifest& manifest, const TofuChoiceInputs& inputs);

// What the chosen OpenTofu reports (`tofu version`) must satisfy the constraints too, as OpenTofu
// checks a required_version; an apply's must be the plan's. Returns a warning for the Run's log
// (empty when there is none) when a build's directory is named for another version.
Result<std::string> check_tofu_version(const protocol::JobManifest& manifest, const TofuChoice& choice,
                                       const std::string& reported, bool has_versions_dir);

}  // namespace takosumi::runner
