#include "controlplane/runs/workspace_planner.hpp"

#include <algorithm>
#include <map>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {
namespace {

bool finished_badly(const Run& run) {
  return run.status == run_status::kFailed || run.status == run_status::kCancelled;
}

bool ended_badly(std::string_view state) {
  return state == step_state::kFailed || state == step_state::kBlocked ||
         state == step_state::kSuperseded || state == step_state::kSkipped;
}

}  // namespace

Result<std::vector<StepProgress>> plan_progress(const Stores& stores, const WorkspacePlan& plan) {
  std::vector<StepProgress> out;
  std::map<std::string, std::string_view> state_of;
  // Steps are in graph order: every producer's state is known before its consumers'.
  for (const auto& step : plan.steps) {
    StepProgress p{.step = &step};
    if (step.plan_run_id) {
      auto run = stores.runs.get_run(*step.plan_run_id);
      if (!run) return std::unexpected(run.error());
      p.plan = std::move(*run);
      if (!p.plan->finished()) {
        p.state = step_state::kPlanning;
      } else if (finished_badly(*p.plan)) {
        p.state = step_state::kFailed;
      } else if (!p.plan->has_changes) {
        p.state = step_state::kDone;
      } else {
        auto apply = stores.runs.latest_apply_of(p.plan->id);
        if (!apply) return std::unexpected(apply.error());
        p.apply = std::move(*apply);
        if (!p.apply) {
          // A plan made against a generation the Capsule has left can never be applied.
          auto current = stores.states.current(step.capsule_id);
          if (!current) return std::unexpected(current.error());
          const std::int64_t now_at = *current ? (*current)->generation : 0;
          p.state = p.plan->prior_generation.value_or(0) == now_at ? step_state::kAwaitingApply
                                                                   : step_state::kSuperseded;
        }
        else if (!p.apply->finished()) p.state = step_state::kApplying;
        else if (finished_badly(*p.apply)) p.state = step_state::kFailed;
        else p.state = step_state::kDone;
      }
    } else {
      p.state = step_state::kWaiting;
      for (const auto& producer : step.producers) {
        const std::string_view s = state_of[producer];
        if (ended_badly(s)) p.state = step_state::kBlocked;
        if (s != step_state::kDone) p.waiting_for.push_back(producer);
      }
      auto capsule = stores.catalog.get_capsule(step.capsule_id);
      if (!capsule) return std::unexpected(capsule.error());
      if (capsule->destroyed_at) p.state = step_state::kSkipped;
    }
    state_of[step.capsule_id] = p.state;
    out.push_back(std::move(p));
  }
  return out;
}

std::string_view plan_status(const std::vector<StepProgress>& progress) {
  const auto is = [](std::string_view state) {
    return [state](const StepProgress& p) { return p.state == state; };
  };
  if (std::ranges::all_of(progress, is(step_state::kDone))) return "succeeded";
  if (std::ranges::all_of(progress, [](const StepProgress& p) {
        return p.state == step_state::kDone || ended_badly(p.state);
      }))
    return "failed";
  return "running";
}

Result<int> WorkspacePlanner::advance(std::string_view workspace_id) {
  return in_transaction(stores_.db, [&]() -> Result<int> {
    auto plans = stores_.workspace_plans.list_unfinished(workspace_id);
    if (!plans) return std::unexpected(plans.error());
    int created = 0;
    for (const auto& plan : *plans) {
      auto progress = plan_progress(stores_, plan);
      if (!progress) return std::unexpected(progress.error());
      if (plan_status(*progress) != "running") {
        TAKOSUMI_TRY(stores_.workspace_plans.finish(plan.id));
        continue;
      }
      for (const auto& p : *progress) {
        if (p.step->plan_run_id || p.state != step_state::kWaiting || !p.waiting_for.empty())
          continue;
        auto capsule = stores_.catalog.get_capsule(p.step->capsule_id);
        if (!capsule) return std::unexpected(capsule.error());
        if (capsule->state_pending) continue;  // restored, waiting for its state
        auto run = stores_.runs.create_plan(*capsule, p.step->source_commit);
        if (!run) return std::unexpected(run.error());
        TAKOSUMI_TRY(stores_.workspace_plans.set_plan_run(plan.id, capsule->id, run->id));
        TAKOSUMI_TRY(stores_.audit.record(run_event(
            plan.created_by, "run.created", *run,
            {{"type", protocol::to_string(run->type)}, {"workspacePlanId", plan.id}})));
        ++created;
      }
    }
    return created;
  });
}

Status WorkspacePlanner::advance_all() {
  auto workspaces = stores_.workspace_plans.unfinished_workspaces();
  if (!workspaces) return std::unexpected(workspaces.error());
  for (const auto& id : *workspaces) TAKOSUMI_TRY(advance(id));
  return {};
}

Result<int> WorkspacePlanner::advance_after(std::string_view run_id) {
  auto run = stores_.runs.get_run(run_id);
  if (!run) return std::unexpected(run.error());
  auto capsule = stores_.catalog.get_capsule(run->capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  return advance(capsule->workspace_id);
}

}  // namespace takosumi::controlplane
