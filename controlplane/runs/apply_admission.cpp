#include "controlplane/runs/apply_admission.hpp"

#include "common/error_codes.hpp"
#include "controlplane/runs/data_loss.hpp"

namespace takosumi::controlplane {

Result<ApplyCandidate> load_apply_candidate(RunStore& runs, StateStore& states,
                                            const BlobStore& blobs, std::string_view plan_run_id) {
  auto plan = runs.get_run(plan_run_id);
  if (!plan) return std::unexpected(plan.error());
  ApplyCandidate candidate{std::move(*plan)};
  auto current = states.current(candidate.plan.capsule_id);
  if (!current) return std::unexpected(current.error());
  candidate.current_generation = *current ? (*current)->generation : 0;
  if (const auto& sha = candidate.plan.plan_artifact_sha256) {
    auto indexed = runs.has_artifact(candidate.plan.id, "plan", *sha);
    if (!indexed) return std::unexpected(indexed.error());
    if (*indexed) {
      auto stored = blobs.contains(*sha);
      if (!stored) return std::unexpected(stored.error());
      candidate.plan_artifact_stored = *stored;
    }
  }
  auto exists = runs.apply_exists_for(candidate.plan.id);
  if (!exists) return std::unexpected(exists.error());
  candidate.apply_exists = *exists;
  return candidate;
}

Status check_can_apply(const Run& plan, std::int64_t current_generation, bool plan_artifact_stored,
                       bool apply_exists) {
  const std::string what = "run " + plan.id;
  if (plan.type == protocol::RunType::drift_check)
    return fail(errc::kConflict, what + " is a drift_check: drift checks are read-only and can never"
                                        " be applied; to change the real resources, plan"
                                        " (POST /api/v1/capsules/" + plan.capsule_id +
                                        "/plan) and apply that plan");
  if (plan.type != protocol::RunType::plan && plan.type != protocol::RunType::destroy_plan)
    return fail(errc::kConflict, what + " is an apply run; only plan and destroy_plan runs can be applied");
  if (plan.status != run_status::kSucceeded)
    return fail(errc::kConflict, what + " has status " + plan.status + "; only a succeeded plan can be applied");
  if (!plan.has_changes) return fail(errc::kConflict, what + " has no changes to apply");
  if (!plan.plan_artifact_sha256 || !plan.plan_digest || !plan_artifact_stored)
    return fail(errc::kConflict, what + " has no stored plan artifact");
  if (apply_exists) return fail(errc::kConflict, "an apply was already created for " + what);
  if (plan.prior_generation.value_or(0) != current_generation)
    return fail(errc::kConflict, what + " was planned against generation " +
                                     std::to_string(plan.prior_generation.value_or(0)) +
                                     " but the capsule is at generation " +
                                     std::to_string(current_generation) + "; plan again");
  return {};
}

Result<ApplyAdmission> admit_apply(const ApplyCandidate& candidate, bool accept_data_loss) {
  TAKOSUMI_TRY(check_can_apply(candidate.plan, candidate.current_generation,
                               candidate.plan_artifact_stored, candidate.apply_exists));
  TAKOSUMI_TRY(check_data_loss_accepted(candidate.plan, accept_data_loss));
  auto marks = stored_data_loss(candidate.plan);
  if (!marks) return std::unexpected(marks.error());
  return ApplyAdmission{accept_data_loss && !marks->empty()};
}

}  // namespace takosumi::controlplane
