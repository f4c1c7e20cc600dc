#pragma once
// What of the provider mirror one Run's sandbox may see. Programs the module may start (tofu
// itself is always executable, e.g. named by an allowed provider's exec setting) see the same
// mirror as tofu: showing only the providers the policy allows keeps a denied provider out of
// reach whatever starts it.
#include <filesystem>
#include <vector>

#include "common/error.hpp"
#include "protocol/run_policy.hpp"

namespace takosumi::runner {

// The mirror's provider directories (<mirror>/<host>/<namespace>/<type>) whose address the
// policy allows, sorted; the whole mirror when the policy has no provider list. sandbox_failed
// when the mirror cannot be listed.
Result<std::vector<std::filesystem::path>> visible_provider_dirs(
    const std::filesystem::path& mirror, const protocol::RunPolicy& policy);

}  // namespace takosumi::runner
