#pragma once
// The providers of a Run, checked around `tofu init`: the dependency lock file the module
// committed, against the operator's pins before init reads it; and what init installed and
// locked, against the mirror, the Run policy and the pins after it. The lock file lies in the
// writable module directory: it is read only as a regular file of the Run's workspace (never a
// FIFO that would block the agent, nor a link to another Run's files).
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "protocol/run_policy.hpp"
#include "runner/policy/provider_pins.hpp"
#include "runner/policy/verified_mirror.hpp"
#include "runner/state/run_workspace.hpp"

namespace takosumi::runner {

// Before init: a version or hash the operator did not pin fails here as
// provider_checksum_mismatch, not later inside init. Nothing to check without pins or lock file.
Status check_committed_lock(const RunWorkspace& workspace, const std::filesystem::path& module_dir,
                            const std::vector<ProviderPin>& pins);

struct InstalledLock {
  std::set<std::string> providers;  // the providers the lock file selected (their credentials apply)
  std::string sha256;               // of the lock file; empty when init wrote none
};

// After init. exec_control: the packages installed are the mirror's own (an allowlisted exec of
// a provider binary is only ever the mirror's).
Result<InstalledLock> check_installed_lock(const RunWorkspace& workspace, const std::filesystem::path& module_dir,
                                           const RunProviders& providers, bool exec_control,
                                           const protocol::RunPolicy& policy);

}  // namespace takosumi::runner
