#pragma once
// What a restarted agent does before it claims new work: finish or report every Run its journal
// holds (agent/durable/run_journal.hpp), using what the crashed process left.
//   claimed  → reported failed/interrupted: nothing was applied.
//   apply    → waits until the supervised tofu has stopped (its workspace lock is free), takes the
//              newest state it persisted — the workspace's file if the workspace survived, else
//              the newest encrypted checkpoint — and reports failed/interrupted with that state,
//              which the control plane keeps as a partial StateVersion.
//   deliver  → the spooled delivery is sent again as it is.
//   lease_lost, undeliverable → left for the operator, unless include_held (`recover --push`).
// Every workspace is wiped once its state is sealed: plaintext does not outlive recovery.
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <filesystem>

#include "agent/session/run_services.hpp"
#include "config/state_limit.hpp"

namespace takosumi::agent {

struct RecoveryContext : RunServices {
  std::filesystem::path work_root;
  // How long a tofu interrupted by its supervisor may still be saving its state.
  std::chrono::seconds lock_wait{60};
  bool include_held = false;
  std::uint64_t max_state_bytes = config::kDefaultMaxStateBytes;  // limits.maxStateBytes
};

struct RecoverySummary {
  int delivered = 0;
  int held = 0;  // left for the operator (lease_lost, undeliverable)
};

boost::asio::awaitable<RecoverySummary> async_recover(RecoveryContext ctx);

// Removes workspaces under work_root that no journal entry names (a crash before the first
// journal write, or an entry the operator discarded) and whose tofu is not running.
void wipe_orphan_workspaces(const std::filesystem::path& work_root, const JournalContents& journal);

}  // namespace takosumi::agent
