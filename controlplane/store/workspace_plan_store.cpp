#include "controlplane/store/workspace_plan_store.hpp"

#include "common/error_codes.hpp"
#include "controlplane/store/db/stored_names.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kSelect =
    "SELECT id, workspace_id, created_by, created_at FROM workspace_plans";

WorkspacePlan plan_from_row(const Statement& s) {
  WorkspacePlan p;
  ColumnReader(s) >> p.id >> p.workspace_id >> p.created_by >> p.created_at;
  return p;
}

}  // namespace

Result<WorkspacePlan> WorkspacePlanStore::with_steps(WorkspacePlan plan) {
  auto steps = collect(
      db_.query("SELECT capsule_id, source_commit, producers, plan_run_id"
                " FROM workspace_plan_steps WHERE workspace_plan_id = ? ORDER BY position",
                plan.id),
      [&](const Statement& s) -> Result<WorkspacePlanStep> {
        WorkspacePlanStep step;
        std::string producers;
        ColumnReader(s) >> step.capsule_id >> step.source_commit >> producers >> step.plan_run_id;
        auto names = names_from_text(producers);
        if (!names)
          return fail(errc::kInternal, "workspace plan " + plan.id + ": stored step is corrupt");
        step.producers = std::move(*names);
        return step;
      });
  if (!steps) return std::unexpected(steps.error());
  plan.steps = std::move(*steps);
  return plan;
}

Result<WorkspacePlan> WorkspacePlanStore::create(WorkspacePlan plan) {
  plan.id = crypto::new_id("wsplan");
  plan.created_at = clock_.now_unix();
  auto stored = in_transaction(db_, [&]() -> Status {
    TAKOSUMI_TRY(db_.run("INSERT INTO workspace_plans (id, workspace_id, created_by, created_at)"
                         " VALUES (?, ?, ?, ?)",
                         plan.id, plan.workspace_id, plan.created_by, plan.created_at));
    std::int64_t position = 0;
    for (const auto& step : plan.steps)
      TAKOSUMI_TRY(db_.run("INSERT INTO workspace_plan_steps (workspace_plan_id, capsule_id,"
                           " position, source_commit, producers, plan_run_id)"
                           " VALUES (?, ?, ?, ?, ?, ?)",
                           plan.id, step.capsule_id, position++, step.source_commit,
                           names_to_text(step.producers), step.plan_run_id));
    return {};
  });
  if (!stored) return std::unexpected(stored.error());
  return plan;
}

Result<WorkspacePlan> WorkspacePlanStore::get(std::string_view id) {
  auto plan = one_row(db_.query(std::string(kSelect) + " WHERE id = ?", id),
                      "workspace plan " + std::string(id), plan_from_row);
  if (!plan) return plan;
  return with_steps(std::move(*plan));
}

Result<std::vector<WorkspacePlan>> WorkspacePlanStore::list_unfinished(
    std::string_view workspace_id) {
  auto plans = collect(
      db_.query(std::string(kSelect) +
                    " WHERE workspace_id = ? AND finished_at IS NULL ORDER BY created_at, rowid",
                workspace_id),
      plan_from_row);
  if (!plans) return plans;
  std::vector<WorkspacePlan> out;
  for (auto& p : *plans) {
    auto with = with_steps(std::move(p));
    if (!with) return std::unexpected(with.error());
    out.push_back(std::move(*with));
  }
  return out;
}

Result<std::vector<std::string>> WorkspacePlanStore::unfinished_workspaces() {
  return collect(db_.query("SELECT DISTINCT workspace_id FROM workspace_plans"
                           " WHERE finished_at IS NULL"),
                 [](const Statement& s) { return s.text(0); });
}

Status WorkspacePlanStore::finish(std::string_view plan_id) {
  return db_.run("UPDATE workspace_plans SET finished_at = ? WHERE id = ? AND finished_at IS NULL",
                 clock_.now_unix(), plan_id);
}

Status WorkspacePlanStore::set_plan_run(std::string_view plan_id, std::string_view capsule_id,
                                        std::string_view run_id) {
  return db_.run("UPDATE workspace_plan_steps SET plan_run_id = ?"
                 " WHERE workspace_plan_id = ? AND capsule_id = ?",
                 run_id, plan_id, capsule_id);
}

}  // namespace takosumi::controlplane
