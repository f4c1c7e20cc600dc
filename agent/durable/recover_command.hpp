#pragma once
// `takosumi-agent recover`: what the run journal and the spool hold, for the operator after a
// crash, a lost lease or a refused delivery (docs/operations.md). Reads only; pushing is the
// daemon's recovery (AgentDaemon::async_push_recovery), discarding removes one Run's entry.
#include <filesystem>
#include <ostream>
#include <string_view>

#include "common/error.hpp"
#include "common/file_lock.hpp"

namespace takosumi::agent {

// Writes a human-readable listing; error only when the journal cannot be read at all.
Status print_recovery_listing(const std::filesystem::path& state_dir,
                              const std::filesystem::path& work_dir, std::ostream& out);

// Removes the journal entry and the spool of one Run (the operator has dealt with it).
// not_found when the journal does not hold it.
Status discard_journaled_run(const std::filesystem::path& state_dir, std::string_view run_id);

// Held exclusively by a running agent, so `recover --push/--discard` cannot race it. conflict
// when another process holds it. The lock is held until the returned FileLock is destroyed.
Result<FileLock> lock_state_dir(const std::filesystem::path& state_dir);

}  // namespace takosumi::agent
