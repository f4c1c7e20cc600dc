#pragma once
// What the parts of the Run queue (run_claims, run_leases, run_completion) write through — the
// store, the audit log, the clock, the lease length — and the ends of a Run they share. Every
// transition is one transaction of the caller's, so a crash leaves either the old or the new
// state; every transition writes its audit events in that same transaction.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/audit_log.hpp"
#include "controlplane/store/catalog_store.hpp"
#include "controlplane/store/connection_store.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/run_store.hpp"
#include "controlplane/store/db/database.hpp"
#include "controlplane/store/state_store.hpp"
#include "protocol/signed_manifest.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::controlplane {

// After this many expired leases a Run fails with lease_lost instead of being claimed again.
inline constexpr std::int64_t kMaxAttempts = 5;

struct ClaimedRun {
  Run run;  // as updated by the claim: running, attempt incremented
  std::string lease_token;
  std::int64_t lease_expires_at = 0;
  std::optional<StateVersion> prior_state;
};

struct Job {
  ClaimedRun claimed;
  protocol::SignedManifest manifest;
};

struct LeaseRenewal {
  std::int64_t lease_expires_at = 0;
  bool cancel_requested = false;
};

// Builds the signed manifest for a claimed Run, inside the claim's transaction. An error fails
// that Run with the error's code (e.g. the prior state blob is missing) and the claim goes on.
using ManifestFactory = std::function<Result<protocol::SignedManifest>(const ClaimedRun&)>;

struct RunLedger {
  Database& db;
  CatalogStore& catalog;
  RunStore& runs;
  StateStore& states;
  ConnectionStore& connections;
  AuditLog& audit;
  const Clock& clock;
  std::int64_t lease_seconds;

  // Ends the Run with `why` (status failed or cancelled) and records run.finished by `actor`.
  Status fail_run(const Run& run, std::string_view status, const Error& why, std::string_view actor) const;
  // run.finished: status and failure code only (a failure message may quote tool output).
  Status record_finished(const Run& run, std::string_view actor, std::string_view status,
                         const std::optional<std::string>& failure_code) const;
  // Audits run.fenced: `call` ("complete", "upload", "phase") of the agent was refused with
  // lease_lost; `attempt` as the call reported it, if it carried one. Its own transaction, best
  // effort (a failure is logged): the refusal is the answer either way. Unknown Runs are skipped.
  void record_fenced(std::string_view run_id, const Agent& agent, std::optional<std::int64_t> attempt,
                     std::string_view call) const;
};

}  // namespace takosumi::controlplane
