#pragma once
// Workspace plans (docs/passing-values.md, "Planning a Workspace"): the steps of each, in graph
// order, and which plan Run each step has. Errors: not_found for unknown ids.
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

class WorkspacePlanStore {
 public:
  WorkspacePlanStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // Assigns id and created_at.
  Result<WorkspacePlan> create(WorkspacePlan plan);
  Result<WorkspacePlan> get(std::string_view id);
  // The Workspace's plans not finished yet, oldest first.
  Result<std::vector<WorkspacePlan>> list_unfinished(std::string_view workspace_id);
  // The Workspaces with an unfinished plan.
  Result<std::vector<std::string>> unfinished_workspaces();
  // Marks the plan finished (every step done, or none can move any more): advance() skips it.
  Status finish(std::string_view plan_id);
  Status set_plan_run(std::string_view plan_id, std::string_view capsule_id,
                      std::string_view run_id);

 private:
  Result<WorkspacePlan> with_steps(WorkspacePlan plan);

  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
