#pragma once
// Runs and their artifact index in SQLite: creating Runs of every type, reading them, and
// cancelling. The lease-driven transitions (claim, heartbeat, complete) live in RunQueue.
// Errors: not_found for unknown ids; conflict for a transition the Run's state forbids.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

class RunStore {
 public:
  RunStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // A plan (`tofu plan`) against the Capsule's current state at claim time.
  Result<Run> create_plan(const Capsule& capsule, const std::string& source_commit);
  // A destroy_plan (`tofu plan -destroy`) against the current state at claim time.
  Result<Run> create_destroy_plan(const Capsule& capsule, const std::string& source_commit);
  // A rollback: an ordinary plan at the target's source commit against the current state, carrying
  // restoresStateVersionId. A target that a destroy produced is returned to by a destroy_plan.
  Result<Run> create_rollback_plan(const Capsule& capsule, const StateVersion& target,
                                   bool target_is_destroyed);
  // Read-only drift_check Runs, each pinned to the given StateVersion and its commit; all or none.
  struct DriftTarget {
    Capsule capsule;
    StateVersion pinned;
  };
  Result<std::vector<Run>> create_drift_checks(const std::vector<DriftTarget>& targets);
  // Creates the apply Run for a plan or destroy_plan Run; callers admit it first
  // (runs/apply_admission.hpp). The apply carries the plan's dataLoss marks, restoresStateVersionId and
  // whether the marks were accepted. A second apply for the same plan is refused by the schema.
  Result<Run> create_apply(const Run& plan, bool data_loss_accepted = false);
  // Every read of a Run leaves its resource_changes_json empty; this is the JSON array itself.
  Result<Run> get_run(std::string_view id);
  Result<std::string> resource_changes(std::string_view run_id);
  Result<std::vector<Run>> list_runs(std::string_view capsule_id, int limit);
  // The Capsule's running Runs, oldest first (live leases, expired ones and stranded applies).
  Result<std::vector<Run>> list_running(std::string_view capsule_id);
  // The Capsule's latest plan or destroy_plan that succeeded, if it has one.
  Result<std::optional<Run>> latest_succeeded_plan(std::string_view capsule_id);
  // The public names of the Outputs the Capsule's module marks sensitive, as its latest succeeded
  // plan or apply reported them (protocol::kSensitiveOutputReason): known from its first plan on.
  Result<std::vector<std::string>> sensitive_outputs(std::string_view capsule_id);
  // True while an apply of a destroy_plan of the Capsule is queued or running: the Capsule is
  // about to publish nothing.
  Result<bool> destroy_pending(std::string_view capsule_id);
  // A finished Run of another control plane, as a state transfer names the Runs that created its
  // StateVersions: its id, Capsule, type, status, commit, plan Run and times only. Kept if
  // present (the caller checks that the present one is the same Run).
  Status import_finished(const Run& run);
  // The latest apply of this plan Run, if one was created.
  Result<std::optional<Run>> latest_apply_of(std::string_view plan_run_id);
  Result<bool> apply_exists_for(std::string_view plan_run_id);
  // True when sv was stored by the successful apply of a destroy_plan (its state is empty).
  Result<bool> is_destroy_result(const StateVersion& sv);
  // queued → cancelled at once; running → cancelRequested; finished → conflict.
  Result<Run> cancel(std::string_view id);
  // The agent was revoked: every lease it holds on a running Run ends now, so the lease rules
  // take over (queued again, or stranded once its apply started). Returns how many.
  Result<std::int64_t> end_leases_of(std::string_view agent_id, std::int64_t now);

  // True when the artifact is new to the Run's index; recording it again changes nothing.
  Result<bool> record_artifact(std::string_view run_id, std::string_view kind,
                               std::string_view sha256, std::int64_t size);
  Result<bool> has_artifact(std::string_view run_id, std::string_view kind,
                            std::string_view sha256);
  // An offline Run's result the fencing refused, kept as the blob `sha256` (docs/air-gapped.md);
  // recording it again changes nothing.
  Status keep_result(const Run& run, std::string_view agent_id, std::string_view sha256,
                     std::string_view code);
  // The Run bundle an export made for an attempt (the blob's sha256), and the one on record.
  Status record_bundle(const Run& run, std::string_view agent_id, std::string_view sha256);
  Result<std::optional<std::string>> bundle_of(std::string_view run_id, std::int64_t attempt,
                                               std::string_view agent_id);
  // The Capsule's kept results recorded at or after `since` (unix seconds), oldest first.
  Result<std::vector<KeptResult>> kept_results(std::string_view capsule_id, std::int64_t since);
  // What the Run's manifest took from its Capsule's Dependencies (a JSON array), or NULL.
  Status set_dependency_inputs(std::string_view run_id, std::optional<std::string> inputs_json);

 private:
  // revision_of: the Run whose spec revision this one runs (see insert's comment).
  Result<Run> insert(Run run, const std::optional<std::string>& revision_of = std::nullopt);

  Database& db_;
  const Clock& clock_;
};

// Runs waiting for an agent, over `runs r` with `?1` the time now: queued ones, and running ones
// whose agent went silent (an expired lease no started apply holds: Run::stranded). kCapsuleFree
// adds that no other Run of the Capsule holds it, as a claim requires. The claim, the queue-depth
// metric and the pools' load all count with these, so they agree.
inline constexpr std::string_view kWaitingForAgent =
    " (r.status = 'queued' OR (r.status = 'running' AND r.lease_expires_at <= ?1"
    " AND (r.apply_started_attempt IS DISTINCT FROM r.attempt OR r.cancel_requested = 1)))";
inline constexpr std::string_view kCapsuleFree =
    " NOT EXISTS (SELECT 1 FROM runs o WHERE o.capsule_id = r.capsule_id AND o.id <> r.id"
    " AND o.status = 'running' AND (o.lease_expires_at > ?1 OR o.apply_started_attempt = o.attempt))";

// Over `runs r JOIN capsules c`: the Capsule's Workspace may use the Capsule's agent pool (an
// admin may take a Workspace off a pool after its Capsules named it: their Runs then wait).
inline constexpr std::string_view kPoolUsable =
    " EXISTS (SELECT 1 FROM agent_pool_workspaces pw WHERE pw.pool = c.agent_pool"
    " AND (pw.workspace_id = '*' OR pw.workspace_id = c.workspace_id))";

// Columns selected by run_from_row, for other stores reading Runs: "SELECT <kRunSelect> WHERE …".
extern const std::string_view kRunSelect;
Run run_from_row(const Statement& s);

}  // namespace takosumi::controlplane
