#pragma once
// Completion: a run report checked against the Run's type and the lease it names, its newState
// stored with fencing on the Capsule's generation, its Outputs, and the Run finished, all in one
// transaction. A completion whose newState does not start from the Capsule's current generation
// is conflict and stores nothing. Only apply Runs may report a newState (a drift_check's is
// invalid_argument) and only they change Outputs. A newState from an apply that did not succeed
// is kept as a partial StateVersion; so is the late report of a stranded apply cancelled while
// its agent was away.
#include <optional>
#include <string>
#include <string_view>

#include "controlplane/runs/run_ledger.hpp"

namespace takosumi::controlplane {

class RunCompletion {
 public:
  explicit RunCompletion(const RunLedger& ledger) : ledger_(ledger) {}
  RunCompletion(RunLedger&&) = delete;  // the ledger must outlive this: RunQueue holds both

  // Applies a run report. Idempotent per (run, attempt). A refusal with lease_lost is audited as
  // run.fenced.
  Status complete(std::string_view run_id, const Agent& agent, const protocol::RunReport& report);

 private:
  Status complete_in_transaction(std::string_view run_id, const Agent& agent,
                                 const protocol::RunReport& report);
  Status store_late_state(const Run& run, const Agent& agent, const protocol::RunReport& report,
                          Transaction& tx);
  Result<std::optional<StateVersion>> store_new_state(const Run& run, const protocol::RunReport& report);
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

  const RunLedger& ledger_;
};

}  // namespace takosumi::controlplane
