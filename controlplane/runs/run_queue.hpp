#pragma once
// The Run queue: claims (run_claims.hpp), the calls under a lease (run_leases.hpp) and completion
// (run_completion.hpp) over one store, audit log and clock (run_ledger.hpp). Time comes from the
// Clock (FakeClock in tests). A drift_check is dispatched only while its pinned StateVersion is
// current; otherwise it fails with state_version_superseded. A Run whose Capsule has a revoked or
// expired Connection is never dispatched: it fails with connection_revoked / connection_expired.
#include <cstdint>

#include "controlplane/runs/run_claims.hpp"
#include "controlplane/runs/run_completion.hpp"
#include "controlplane/runs/run_leases.hpp"
#include "controlplane/runs/run_ledger.hpp"

namespace takosumi::controlplane {

class RunQueue {
 public:
  RunQueue(Database& db, CatalogStore& catalog, RunStore& runs, StateStore& states,
           ConnectionStore& connections, AuditLog& audit, const Clock& clock, std::int64_t lease_seconds)
      : ledger_{db, catalog, runs, states, connections, audit, clock, lease_seconds},
        claims_(ledger_),
        leases_(ledger_),
        completion_(ledger_) {}
  RunQueue(const RunQueue&) = delete;
  RunQueue& operator=(const RunQueue&) = delete;

  RunClaims& claims() { return claims_; }
  const RunClaims& claims() const { return claims_; }
  RunLeases& leases() { return leases_; }
  RunCompletion& completion() { return completion_; }

 private:
  RunLedger ledger_;  // first: the parts below keep a reference to it
  RunClaims claims_;
  RunLeases leases_;
  RunCompletion completion_;
};

}  // namespace takosumi::controlplane
