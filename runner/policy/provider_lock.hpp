#pragma once
// Reads the provider source addresses out of OpenTofu's dependency lock file
// (.terraform.lock.hcl), which `tofu init` writes with one `provider "<address>" {` block per
// provider the module selected.
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::runner {

// Fully qualified addresses, e.g. "registry.opentofu.org/hashicorp/null", lower case.
std::set<std::string> locked_providers(std::string_view lock_file_text);
// A missing lock file means no providers (a module without any).
Result<std::set<std::string>> read_locked_providers(const std::filesystem::path& lock_file);

}  // namespace takosumi::runner
