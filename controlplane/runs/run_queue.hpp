#pragma once
// The Run queue and its leases: claim, heartbeat, lease checks and completion with fencing.
// Every transition is one SQLite transaction, so a crash leaves either the old or the new state.
// Time comes from the Clock (FakeClock in tests). Lease failures are lease_lost; a completion
// whose newState does not start from the Capsule's current generation is conflict and stores
// nothing. Only apply Runs may report a newState (a drift_check's is invalid_argument) and only
// they change Outputs. A drift_check is dispatched only while its pinned StateVersion is current;
// otherwise it fails with state_version_superseded. A Run whose Capsule has a revoked or expired
// Connection is never dispatched: it fails with connection_revoked / connection_expired. Every
// transition writes its audit events in the same transaction.
// Crash safety: an apply's agent announces `tofu apply` (start_apply) while its lease is live.
// From then on the Run is never claimed again: once its lease expires it is stranded
// (Run::stranded) and holds its Capsule until its agent reports with the old lease token or
// someone cancels it.
// A newState from an apply that did not succeed is kept as a partial StateVersion.
// One class, its definitions by concern: run_claims.cpp, run_leases.cpp (every lease check goes
// through lease.hpp), run_completion.cpp, and what they share in run_queue.cpp.
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

class RunQueue {
 public:
  RunQueue(Database& db, CatalogStore& catalog, RunStore& runs, StateStore& states,
           ConnectionStore& connections, AuditLog& audit, const Clock& clock,
           std::int64_t lease_seconds)
      : db_(db),
        catalog_(catalog),
        runs_(runs),
        states_(states),
        connections_(connections),
        audit_(audit),
        clock_(clock),
        lease_seconds_(lease_seconds) {}

  // Claims up to max_jobs Runs, oldest first: queued ones and running ones whose lease expired,
  // except stranded applies (a cancelled one ends as cancelled instead). At most one Run per
  // Capsule holds a live lease at a time, and a stranded apply holds its Capsule as a lease does.
  Result<std::vector<Job>> claim(const Agent& agent, int max_jobs, const ManifestFactory& build);
  // An offline Run bundle's claim (docs/air-gapped.md): this Run, for this offline agent, leased
  // for lease_seconds (the bundle's validity). The Run must be one a claim by the agent could
  // take and the oldest waiting Run of its Capsule; conflict otherwise, naming why. An apply is
  // marked started at once (the site cannot announce it), so it is never exported twice.
  Result<Job> claim_for_export(std::string_view run_id, const Agent& agent,
                               std::int64_t lease_seconds, const ManifestFactory& build);
  Result<LeaseRenewal> heartbeat(std::string_view run_id, const Agent& agent,
                                 std::string_view lease_token);
  // The Run, when agent holds its current lease (expired but not yet re-claimed still counts).
  Result<Run> check_lease(std::string_view run_id, const Agent& agent,
                          std::string_view lease_token);
  // check_lease, and also the agent of a stranded apply that was cancelled while it was away: it
  // may still upload the state the apply changed (complete() keeps it as a partial StateVersion).
  Result<Run> check_upload_lease(std::string_view run_id, const Agent& agent,
                                 std::string_view lease_token);
  // The lease token is (or was) this agent's lease of the Run, live, expired or completed: what
  // complete() will check again; lease_lost otherwise. Checked before a large report is read.
  Result<Run> check_report_lease(std::string_view run_id, const Agent& agent,
                                 std::string_view lease_token);
  // Applies a run report. Idempotent per (run, attempt). A refusal with lease_lost is audited as
  // run.fenced.
  Status complete(std::string_view run_id, const Agent& agent, const protocol::RunReport& report);
  // The agent is about to run `tofu apply` for `attempt`: records it (run.apply_started) and renews
  // the lease. Needs the current lease, unexpired unless this attempt already announced it (so a
  // retry is idempotent); otherwise lease_lost (audited as run.fenced) and the agent must not
  // apply. invalid_argument for a Run that is not an apply; not_found for an unknown Run.
  Result<LeaseRenewal> start_apply(std::string_view run_id, const Agent& agent,
                                   std::string_view lease_token, std::int64_t attempt);
  // Undoes a claim whose answer never reached the agent (its connection failed): the Run is queued
  // again with the attempt it had, for any agent to claim now rather than after the lease; audited
  // as run.released. lease_lost when the agent no longer holds that lease or has started an apply.
  // A cancel of a Run exported to an offline agent (docs/air-gapped.md): nobody can tell the site,
  // so the Run ends cancelled now and frees its Capsule. An exported apply's result stays
  // acceptable as a stranded apply's does (its state is kept, as a partial StateVersion when it
  // still starts from the current generation; otherwise import keeps the result file). Does
  // nothing to a Run that is not running under an offline agent's lease.
  Status end_exported(std::string_view run_id, std::string_view actor);
  // exported: the lease is an offline export whose bundle was never handed out; its apply
  // announcement is undone with it.
  Status release(std::string_view run_id, const Agent& agent, std::string_view lease_token,
                 bool exported = false);
  // Audits run.fenced: `call` ("complete", "upload", "phase") of the agent was refused with
  // lease_lost; `attempt` as the call reported it, if it carried one. Its own transaction, best
  // effort (a failure is logged): the refusal is the answer either way. Unknown Runs are skipped.
  void record_fenced(std::string_view run_id, const Agent& agent,
                     std::optional<std::int64_t> attempt, std::string_view call);

  // Leases found expired by claims since start (their Run was handed out again or ended).
  std::int64_t lease_expiries() const { return lease_expiries_.load(); }

 private:
  struct LeaseTerms {
    std::int64_t seconds = 0;
    bool apply_announced = false;  // an apply's lease starts as announced (offline bundles)
  };
  struct ClaimStep {
    bool exhausted = false;
    std::optional<Job> job;
    // Why the candidate's manifest cannot be built (dispatch): the claim is rolled back and the
    // Run fails. A store that is unavailable is no such reason: that is an error of the claim.
    std::optional<Error> unbuildable;
  };
  // run_claims.cpp
  Result<std::optional<Run>> next_candidate(std::int64_t now, const Agent& agent);
  Result<ClaimStep> claim_one(const Agent& agent, const ManifestFactory& build);
  // Fails the Run (run.refused) when its Capsule has a revoked or expired Connection.
  Result<bool> refuse_for_connections(const Run& run, const Agent& agent);
  Result<ClaimStep> dispatch(const Run& run, const Agent& agent, std::optional<StateVersion> prior,
                             const ManifestFactory& build, LeaseTerms terms);
  // What a claim does with the candidate it found, inside its transaction tx (committed when it
  // returns): ends it, refuses it, or leases it on `terms` and builds its manifest.
  Result<ClaimStep> take_candidate(Transaction& tx, const Run& run, const Agent& agent,
                                   const ManifestFactory& build, LeaseTerms terms);
  // run_leases.cpp
  Result<LeaseRenewal> start_apply_in_transaction(std::string_view run_id, const Agent& agent,
                                                  std::string_view lease_token,
                                                  std::int64_t attempt);
  // run_completion.cpp
  Status complete_in_transaction(std::string_view run_id, const Agent& agent,
                                 const protocol::RunReport& report);
  Status store_late_state(const Run& run, const Agent& agent, const protocol::RunReport& report,
                          Transaction& tx);
  Result<std::optional<StateVersion>> store_new_state(const Run& run,
                                                      const protocol::RunReport& report);
  Status store_outputs(const Run& run, const protocol::RunReport& report,
                       const std::optional<StateVersion>& created);
  Status finish(const Run& run, const protocol::RunReport& report,
                const std::optional<StateVersion>& created);
  Status check_plan_report(const Run& run, const protocol::RunReport& report);
  // invalid_argument naming `field` unless the Run uploaded a `kind` artifact of that digest.
  Status check_uploaded(const Run& run, std::string_view kind, const std::string& sha256,
                        std::string_view field);
  Status check_report_for_type(const Run& run, const protocol::RunReport& report);
  Status mark_destroyed(const Run& run, const protocol::RunReport& report,
                        const std::optional<StateVersion>& created);
  // run_queue.cpp: ends the Run with `why` and records run.finished by `actor`.
  Status fail_run(const Run& run, std::string_view status, const Error& why, std::string_view actor);
  Status record_finished(const Run& run, std::string_view actor, std::string_view status,
                         const std::optional<std::string>& failure_code);

  Database& db_;
  CatalogStore& catalog_;
  RunStore& runs_;
  StateStore& states_;
  ConnectionStore& connections_;
  AuditLog& audit_;
  const Clock& clock_;
  std::int64_t lease_seconds_;
  std::atomic<std::int64_t> lease_expiries_{0};
};

}  // namespace takosumi::controlplane
