#pragma once
// A verified cache of what `tofu init` leaves in a module directory, per agent: the provider
// links into the mirror, `.terraform/modules/modules.json`, the backend record and the dependency
// lock file. A Run whose inputs to init match a cached result exactly starts from it and skips
// init: the configuration's every file (the module's tree and the local modules it calls), the
// variables (init evaluates module sources and the backend early), the OpenTofu build, the CLI
// config (so the mirror's path), the mirror's packages as they are now, and the Run policy.
//
// Only a configuration without remote modules is cached (a downloaded module could change behind
// the same source address), and only a result made of what init makes from the mirror: directories,
// small regular files, and links into the mirror, nowhere else. An entry is the agent's own file
// (0600 in a 0700 directory the sandbox never sees), checked by its digest when read; a damaged,
// old or unexpected entry is ignored and the Run runs init. Restoring writes only beneath the
// module's `.terraform` and its lock file, never through a link, and every link it makes must
// lead into the Run's mirror; then the Run checks the providers and the lock file as after init.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "runner/state/run_workspace.hpp"

namespace takosumi::runner {

struct InitInputs {
  std::filesystem::path module_dir;
  std::vector<std::string> files;  // the scan's files, relative to module_dir (ModuleScan::files)
  bool remote_modules = false;     // the scan saw a module with a remote source
  std::filesystem::path tofu_binary;
  std::string cli_config;       // the CLI config's text
  std::filesystem::path mirror; // where providers come from (the verified copy, or the mirror)
  std::string variables;        // the variables file tofu reads, as written
  std::string policy;           // the Run policy, serialized
};

// The key of an init's result, or nullopt when these inputs are not cached (remote modules, files
// past the bound, a file the agent cannot read as a regular file of the workspace). Blocking.
std::optional<std::string> init_cache_key(const RunWorkspace& workspace, const InitInputs& inputs);

class InitCache {
 public:
  static constexpr std::size_t kMaxEntries = 256;
  static constexpr std::chrono::hours kMaxAge{24 * 7};

  explicit InitCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Writes the cached result for key into module_dir; false (nothing written) when there is none
  // that holds up. Blocking.
  Result<bool> restore(const std::string& key, const RunWorkspace& workspace,
                       const std::filesystem::path& module_dir, const std::filesystem::path& mirror) const;
  // Keeps what init left in module_dir for key, when it is what init makes from the mirror;
  // otherwise keeps nothing. Removes the oldest entries past kMaxEntries. Blocking.
  Status store(const std::string& key, const std::filesystem::path& module_dir,
               const std::filesystem::path& mirror) const;

 private:
  std::filesystem::path entry(const std::string& key) const { return dir_ / (key + ".init"); }
  std::filesystem::path dir_;
};

}  // namespace takosumi::runner
