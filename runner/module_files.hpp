#pragma once
// Finds the configuration files of a module tree for the policy scan, without following
// symbolic links and within fixed limits.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace takosumi::runner {

inline constexpr std::size_t kMaxModuleFiles = 10000;
inline constexpr int kMaxModuleDirDepth = 64;

struct ModuleFiles {
  // Directory relative to the root in generic form ("" for the root) → file names, sorted.
  std::map<std::string, std::vector<std::string>> directories;
  bool post_init = false;         // root/.terraform/modules exists: `tofu init` has run
  std::string incomplete_reason;  // the first thing that could not be listed; empty if none
};

// .tf, .tf.json, .tofu and .tofu.json files, except those OpenTofu ignores (names starting with
// a dot). Hidden directories are skipped, but root/.terraform/modules is listed. Symbolic links
// to such files or to directories, other special files, unreadable directories and the limits
// (kMaxModuleFiles files, kMaxModuleDirDepth levels) make the listing incomplete. Fails
// (io_error) only when root itself cannot be listed.
Result<ModuleFiles> list_module_files(const std::filesystem::path& root);

bool is_config_file_name(std::string_view name);

}  // namespace takosumi::runner
