#pragma once
// A plan Run's tofu phase (plan and destroy_plan): `tofu plan`, the plan file frozen, `tofu show
// -json` of the frozen copy reviewed (runner/plan/plan_review.hpp), the plan sealed when it has
// changes, and the reviewer's plan view kept in the outbox. Runs after init, with the Run's
// variables and credentials set on its TofuCli.
#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "runner/phases/phase_context.hpp"
#include "runner/plan/plan_review.hpp"
#include "runner/state/run_artifacts.hpp"

namespace takosumi::runner {

struct PlannedRun {
  // What the plan changes: its analysis, data-loss marks and refused Outputs. Its view and
  // sealed values are spent (the view is in view_file, the values are in the sealed plan).
  PlanReview review;
  std::optional<SealedArtifact> sealed;  // only a plan with changes is sealed
  std::filesystem::path view_file;       // the plan view (GET /api/v1/runs/{id}/plan)
  std::string view_sha256;
};

// With changes, the log ends with the plan as sealed (sealed_plan_lines).
boost::asio::awaitable<Result<PlannedRun>> async_plan_phase(const PhaseContext& run, PlanMode mode,
                                                            const std::vector<std::string>& data_loss_patterns);

}  // namespace takosumi::runner
