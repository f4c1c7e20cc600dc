#pragma once
// Claiming Runs: the next candidate for an agent, the reasons a candidate ends instead of being
// dispatched (a lease expired too often, a cancel, a superseded drift pin, a revoked or expired
// Connection, a manifest that cannot be built), and the lease handed out with its signed
// manifest. At most one Run per Capsule holds a live lease at a time; a stranded apply
// (Run::stranded) is never claimed again and holds its Capsule as a lease does.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "controlplane/runs/run_ledger.hpp"

namespace takosumi::controlplane {

class RunClaims {
 public:
  explicit RunClaims(const RunLedger& ledger) : ledger_(ledger) {}
  RunClaims(RunLedger&&) = delete;  // the ledger must outlive this: RunQueue holds both

  // Claims up to max_jobs Runs, oldest first: queued ones and running ones whose lease expired,
  // except stranded applies (a cancelled one ends as cancelled instead).
  Result<std::vector<Job>> claim(const Agent& agent, int max_jobs, const ManifestFactory& build);
  // An offline Run bundle's claim (docs/air-gapped.md): this Run, for this offline agent, leased
  // for lease_seconds (the bundle's validity). The Run must be one a claim by the agent could
  // take and the oldest waiting Run of its Capsule; conflict otherwise, naming why. An apply is
  // marked started at once (the site cannot announce it), so it is never exported twice.
  Result<Job> claim_for_export(std::string_view run_id, const Agent& agent,
                               std::int64_t lease_seconds, const ManifestFactory& build);

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

  const RunLedger& ledger_;
  std::atomic<std::int64_t> lease_expiries_{0};
};

}  // namespace takosumi::controlplane
