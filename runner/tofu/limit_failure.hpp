#pragma once
// A Run that ended past one of its limits says which, whatever the command's own failure was
// (a provider's "out of memory", tofu's "File size limit exceeded"): limit_exceeded naming the
// setting an operator raises.
#include <cstdint>

#include "common/error.hpp"

namespace takosumi::runner {

struct RunLimitFacts {
  std::uint64_t memory_bytes = 0;     // limits.memoryMiB; 0: none
  std::uint64_t workspace_bytes = 0;  // limits.workspaceMiB; 0: none
  std::uint64_t oom_kills = 0;        // of the Run's cgroup, when it holds the memory
};

// result unchanged when it succeeded, is limit_exceeded already, or names no limit.
Status name_the_limit(const Status& result, const RunLimitFacts& facts);

}  // namespace takosumi::runner
