#include "runner/tofu/limit_failure.hpp"

#include <string>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {

Status name_the_limit(const Status& result, const RunLimitFacts& facts) {
  if (result || result.error().code == errc::kLimitExceeded) return result;
  const std::string memory_mib = std::to_string(facts.memory_bytes >> 20);
  if (facts.oom_kills > 0)
    return fail(errc::kLimitExceeded, "the Run went past its memory limit (limits.memoryMiB: " + memory_mib +
                                          " MiB for all of its processes together) and the kernel "
                                          "stopped it: " + result.error().message);
  const std::string& m = result.error().message;
  const bool address_space = facts.memory_bytes > 0 &&
                             (m.find("out of memory") != std::string::npos ||
                              m.find("Cannot allocate memory") != std::string::npos ||
                              m.find("MemoryError") != std::string::npos);
  if (address_space)
    return fail(errc::kLimitExceeded, "a process of the Run went past its memory limit "
                                      "(limits.memoryMiB: " + memory_mib + " MiB of address space each): " + m);
  if (facts.workspace_bytes > 0 && m.find("File size limit exceeded") != std::string::npos)
    return fail(errc::kLimitExceeded, "a file of the Run went past its workspace limit "
                                      "(limits.workspaceMiB: " + std::to_string(facts.workspace_bytes >> 20) +
                                      " MiB): " + m);
  return result;
}

}  // namespace takosumi::runner
