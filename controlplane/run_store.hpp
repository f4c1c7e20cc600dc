#pragma once
// Runs and their artifact index in SQLite: creating plan and apply Runs, reading them, and
// cancelling. The lease-driven transitions (claim, heartbeat, complete) live in RunQueue.
// Errors: not_found for unknown ids; conflict for a transition the Run's state forbids.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/model.hpp"
#include "controlplane/sqlite_db.hpp"

namespace takosumi::controlplane {

// Why a plan Run cannot be applied, or success. Pure; `current_generation` is the Capsule's.
Status check_can_apply(const Run& plan, std::int64_t current_generation, bool plan_artifact_stored,
                       bool apply_exists);

class RunStore {
 public:
  RunStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  Result<Run> create_plan(const Capsule& capsule, const std::string& source_commit);
  // Creates the apply Run for a plan Run; callers check check_can_apply first. A second apply for
  // the same plan is refused by the schema (conflict).
  Result<Run> create_apply(const Run& plan);
  Result<Run> get_run(std::string_view id);
  Result<std::vector<Run>> list_runs(std::string_view capsule_id, int limit);
  Result<bool> apply_exists_for(std::string_view plan_run_id);
  // queued → cancelled at once; running → cancelRequested; finished → conflict.
  Result<Run> cancel(std::string_view id);

  Status record_artifact(std::string_view run_id, std::string_view kind, std::string_view sha256,
                         std::int64_t size);
  Result<bool> has_artifact(std::string_view run_id, std::string_view kind,
                            std::string_view sha256);

 private:
  Result<Run> insert(Run run);

  Database& db_;
  const Clock& clock_;
};

// Columns selected by run_from_row, for other stores reading Runs: "SELECT <kRunSelect> WHERE …".
extern const std::string_view kRunSelect;
Run run_from_row(const Statement& s);

}  // namespace takosumi::controlplane
