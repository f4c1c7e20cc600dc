#pragma once
// The calls an agent makes while it holds a lease: the checks (every one through lease.hpp), the
// heartbeat, the announcement of an apply, the release of a claim that never arrived, the end of
// an exported Run, and the audit of a refused (fenced) call. Lease failures are lease_lost.
// Crash safety: an apply's agent announces `tofu apply` (start_apply) while its lease is live.
// From then on the Run is never claimed again: once its lease expires it is stranded
// (Run::stranded) and holds its Capsule until its agent reports with the old lease token or
// someone cancels it.
#include <cstdint>
#include <optional>
#include <string_view>

#include "controlplane/runs/run_ledger.hpp"

namespace takosumi::controlplane {

class RunLeases {
 public:
  explicit RunLeases(const RunLedger& ledger) : ledger_(ledger) {}
  RunLeases(RunLedger&&) = delete;  // the ledger must outlive this: RunQueue holds both

  Result<LeaseRenewal> heartbeat(std::string_view run_id, const Agent& agent,
                                 std::string_view lease_token);
  // The Run, when agent holds its current lease (expired but not yet re-claimed still counts).
  Result<Run> check_lease(std::string_view run_id, const Agent& agent, std::string_view lease_token);
  // check_lease, and also the agent of a stranded apply that was cancelled while it was away: it
  // may still upload the state the apply changed (completion keeps it as a partial StateVersion).
  Result<Run> check_upload_lease(std::string_view run_id, const Agent& agent,
                                 std::string_view lease_token);
  // The lease token is (or was) this agent's lease of the Run, live, expired or completed: what
  // completion will check again; lease_lost otherwise. Checked before a large report is read.
  Result<Run> check_report_lease(std::string_view run_id, const Agent& agent,
                                 std::string_view lease_token);
  // The agent is about to run `tofu apply` for `attempt`: records it (run.apply_started) and renews
  // the lease. Needs the current lease, unexpired unless this attempt already announced it (so a
  // retry is idempotent); otherwise lease_lost (audited as run.fenced) and the agent must not
  // apply. invalid_argument for a Run that is not an apply; not_found for an unknown Run.
  Result<LeaseRenewal> start_apply(std::string_view run_id, const Agent& agent,
                                   std::string_view lease_token, std::int64_t attempt);
  // Undoes a claim whose answer never reached the agent (its connection failed): the Run is queued
  // again with the attempt it had, for any agent to claim now rather than after the lease; audited
  // as run.released. lease_lost when the agent no longer holds that lease or has started an apply.
  // exported: the lease is an offline export whose bundle was never handed out; its apply
  // announcement is undone with it.
  Status release(std::string_view run_id, const Agent& agent, std::string_view lease_token,
                 bool exported = false);
  // A cancel of a Run exported to an offline agent (docs/air-gapped.md): nobody can tell the site,
  // so the Run ends cancelled now and frees its Capsule. An exported apply's result stays
  // acceptable as a stranded apply's does (its state is kept, as a partial StateVersion when it
  // still starts from the current generation; otherwise import keeps the result file). Does
  // nothing to a Run that is not running under an offline agent's lease.
  Status end_exported(std::string_view run_id, std::string_view actor);
  // RunLedger::record_fenced: a call of the agent's that the API refused with lease_lost.
  void record_fenced(std::string_view run_id, const Agent& agent, std::optional<std::int64_t> attempt,
                     std::string_view call) {
    ledger_.record_fenced(run_id, agent, attempt, call);
  }

 private:
  Result<LeaseRenewal> start_apply_in_transaction(std::string_view run_id, const Agent& agent,
                                                  std::string_view lease_token, std::int64_t attempt);

  const RunLedger& ledger_;
};

}  // namespace takosumi::controlplane
