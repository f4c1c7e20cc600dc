#pragma once
// After `tofu init`: the providers tofu installed must be the mirror's, as the exec allowlist
// expects. With an unpacked filesystem mirror tofu links <module>/.terraform/providers/<host>/
// <namespace>/<type>/<version>/<platform> to the mirror's directory; a packed (.zip) mirror is
// extracted into the workspace instead, where nothing may execute. Each provider binary must also
// be statically linked: the allowlist never grants providers the dynamic loader.
#include <filesystem>

#include "common/error.hpp"

namespace takosumi::runner {

// sandbox_failed naming the provider and what to change (unpack the mirror, use a static build);
// workspace_failed when the directory cannot be read. No .terraform/providers: nothing to check.
Status check_installed_providers(const std::filesystem::path& module_dir,
                                 const std::filesystem::path& mirror);

}  // namespace takosumi::runner
