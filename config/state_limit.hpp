#pragma once
// The default of limits.maxStateBytes, spelled once: the agent's configuration, the runner's
// settings and every reader of a state take the limit from a setting that starts here.
#include <cstdint>

namespace takosumi::config {

inline constexpr std::uint64_t kDefaultMaxStateBytes = std::uint64_t{256} << 20;

}  // namespace takosumi::config
