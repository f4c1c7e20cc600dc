// Completion: a run report checked against the Run's type, its newState stored with fencing on
// the Capsule's generation, its Outputs, and the Run finished, all in one transaction.
#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "controlplane/runs/lease.hpp"
#include "controlplane/runs/run_completion.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

std::optional<std::string> non_empty(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

std::string final_status(const protocol::RunReport& report) {
  if (report.status == run_status::kSucceeded) return std::string(run_status::kSucceeded);
  if (report.failure_code == errc::kCancelled) return std::string(run_status::kCancelled);
  return std::string(run_status::kFailed);
}

}  // namespace

Status RunCompletion::check_plan_report(const Run& run, const protocol::RunReport& report) {
  if (report.new_state)
    return fail(errc::kInvalidArgument, "newState is only accepted from apply runs");
  if (report.status != run_status::kSucceeded || !report.has_changes) return {};
  if (!is_sha256_hex(report.plan_digest))
    return fail(errc::kInvalidArgument, "a plan with changes needs planDigest (64 hex)");
  return check_uploaded(run, "plan", report.plan_artifact_sha256, "planArtifactSha256");
}

Status RunCompletion::check_uploaded(const Run& run, std::string_view kind, const std::string& sha256,
                                std::string_view field) {
  auto stored = ledger_.runs.has_artifact(run.id, kind, sha256);
  if (!stored) return std::unexpected(stored.error());
  if (!*stored)
    return fail(errc::kInvalidArgument, std::string(field) + " \"" + sha256 +
                                            "\" was not uploaded for run " + run.id);
  return {};
}

Status RunCompletion::check_report_for_type(const Run& run, const protocol::RunReport& report) {
  switch (run.type) {
    case protocol::RunType::plan:
    case protocol::RunType::destroy_plan:
      return check_plan_report(run, report);
    case protocol::RunType::drift_check:
      if (report.new_state)
        return fail(errc::kInvalidArgument, "drift_check run " + run.id +
                                                " is read-only: it never reports a newState");
      return {};
    case protocol::RunType::apply:
      return {};  // dataLoss or drift in an apply's report are ignored: its plan's marks stay
  }
  return {};
}

Result<std::optional<StateVersion>> RunCompletion::store_new_state(const Run& run,
                                                              const protocol::RunReport& report) {
  if (!report.new_state) return std::optional<StateVersion>{};
  const auto& ns = *report.new_state;
  TAKOSUMI_TRY(check_uploaded(run, "state", ns.artifact_sha256, "newState.artifactSha256"));
  auto current = ledger_.states.current(run.capsule_id);
  if (!current) return std::unexpected(current.error());
  const std::int64_t generation = *current ? (*current)->generation : 0;
  if (ns.prior_generation != generation)
    return fail(errc::kConflict, "newState.priorGeneration " + std::to_string(ns.prior_generation) +
                                     " is not the capsule's current generation " +
                                     std::to_string(generation) + "; nothing stored");
  StateVersion sv;
  sv.capsule_id = run.capsule_id;
  sv.created_by_run_id = run.id;
  sv.source_commit = run.source_commit;
  sv.serial = ns.serial;
  sv.lineage = without_nul(ns.lineage);  // from the state file a module could have written
  sv.plaintext_sha256 = ns.plaintext_sha256;
  sv.ciphertext_sha256 = ns.artifact_sha256;
  sv.restored_from = run.restores_state_version_id;
  // A failed, cancelled or interrupted apply may have created resources before it stopped: its
  // state is kept, so nothing it created is forgotten, but marked as not the plan's result.
  sv.partial = report.status != run_status::kSucceeded;
  auto appended = ledger_.states.append(std::move(sv));
  if (!appended) return std::unexpected(appended.error());
  return std::optional<StateVersion>(std::move(*appended));
}

Status RunCompletion::store_outputs(const Run& run, const protocol::RunReport& report,
                               const std::optional<StateVersion>& created) {
  if (run.type != protocol::RunType::apply || report.status != run_status::kSucceeded) return {};
  auto capsule = ledger_.catalog.get_capsule(run.capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  std::optional<StateVersion> version = created;
  if (!version) {
    auto current = ledger_.states.current(run.capsule_id);
    if (!current) return std::unexpected(current.error());
    version = std::move(*current);
  }
  auto outputs = filter_outputs(report.outputs, capsule->output_allowlist);
  if (!outputs) return std::unexpected(outputs.error());
  return ledger_.states.set_outputs(run.capsule_id, run.id, version, std::move(*outputs));
}

Status RunCompletion::mark_destroyed(const Run& run, const protocol::RunReport& report,
                                const std::optional<StateVersion>& created) {
  if (!created || !run.planned_by) return {};
  auto plan = ledger_.runs.get_run(*run.planned_by);
  if (!plan) return std::unexpected(plan.error());
  const bool destroyed =
      plan->type == protocol::RunType::destroy_plan && report.status == run_status::kSucceeded;
  std::optional<std::int64_t> at;
  if (destroyed) at = ledger_.clock.now_unix();
  return ledger_.catalog.set_destroyed(run.capsule_id, at);
}

Status RunCompletion::finish(const Run& run, const protocol::RunReport& report,
                        const std::optional<StateVersion>& created) {
  const auto j = protocol::to_json(report);
  const bool read_only = run.type == protocol::RunType::drift_check;
  std::optional<std::string> sv_id;
  if (created) sv_id = created->id;
  // An apply keeps the marks copied from its plan; plans store what their report found.
  std::optional<std::string> data_loss = run.data_loss_json;
  if (run.type != protocol::RunType::apply) data_loss = takosumi::serialize(j.at("dataLoss"));
  std::optional<std::string> drift;
  if (read_only && report.drift) drift = takosumi::serialize(j.at("drift"));
  std::optional<std::string> plan_digest, plan_artifact, plan_view;
  if (!read_only) {
    plan_digest = non_empty(report.plan_digest);
    plan_artifact = non_empty(report.plan_artifact_sha256);
  }
  // A plan view only if it was uploaded for this Run (an offline result carries none); one that
  // was not is left out, never refused: the plan stands without it.
  if (run.type == protocol::RunType::plan || run.type == protocol::RunType::destroy_plan)
    plan_view = non_empty(report.plan_view_sha256);
  return ledger_.db.run(
      "UPDATE runs SET status = ?, completed_attempt = ?, finished_at = ?, failure_code = ?,"
      " failure_message = ?, has_changes = ?, change_summary = ?, resource_changes = ?,"
      " plan_digest = COALESCE(plan_digest, ?), plan_artifact_sha256 ="
      " COALESCE(plan_artifact_sha256, ?), state_version_id = ?, tofu_version = ?,"
      " tofu_build = ?, provider_lock_sha256 = ?, env_names = ?, phase_millis = ?, data_loss = ?,"
      " drift = ?, refused_outputs = ?, lease_expires_at = NULL,"
      " plan_view_sha256 = (SELECT sha256 FROM plan_views WHERE run_id = ? AND sha256 = ?)"
      " WHERE id = ?",
      final_status(report), run.attempt, ledger_.clock.now_unix(), non_empty(report.failure_code),
      non_empty(without_nul(report.failure_message)), report.has_changes,
      takosumi::serialize(j.at("changeSummary")), takosumi::serialize(j.at("resourceChanges")),
      plan_digest, plan_artifact, sv_id, non_empty(without_nul(report.tofu_version)),
      non_empty(without_nul(report.tofu_build)), non_empty(report.provider_lock_sha256),
      takosumi::serialize(j.at("envNames")), takosumi::serialize(j.at("phaseMillis")), data_loss,
      drift, takosumi::serialize(j.at("refusedOutputs")), run.id, plan_view, run.id);
}

// The report of a stranded apply that was cancelled while its agent was away: the Run stays
// cancelled, but the state the apply changed is kept (partial) so nothing it created is forgotten.
// A newState that no longer starts from the current generation is refused (conflict): the agent
// keeps it for the operator.
Status RunCompletion::store_late_state(const Run& run, const Agent& agent,
                                  const protocol::RunReport& report, Transaction& tx) {
  protocol::RunReport late = report;
  if (late.status == run_status::kSucceeded) late.status = run_status::kFailed;  // partial anyway
  auto created = store_new_state(run, late);
  if (!created) return std::unexpected(created.error());
  TAKOSUMI_TRY(ledger_.db.run("UPDATE runs SET completed_attempt = attempt, state_version_id = ? WHERE id = ?",
                       *created ? std::optional<std::string>((*created)->id) : std::nullopt, run.id));
  if (*created)
    TAKOSUMI_TRY(ledger_.audit.record(run_event(agent_actor(agent.id), "state_version.created", run,
                                         {{"stateVersionId", (*created)->id},
                                          {"generation", (*created)->generation},
                                          {"partial", true},
                                          {"late", true}})));
  return tx.commit();
}

Status RunCompletion::complete(std::string_view run_id, const Agent& agent,
                          const protocol::RunReport& report) {
  auto done = complete_in_transaction(run_id, agent, report);
  if (!done && done.error().code == errc::kLeaseLost)
    ledger_.record_fenced(run_id, agent, report.attempt, "complete");
  return done;
}

Status RunCompletion::complete_in_transaction(std::string_view run_id, const Agent& agent,
                                         const protocol::RunReport& report) {
  Transaction tx(ledger_.db);
  TAKOSUMI_TRY(tx.begun());
  auto run = ledger_.runs.get_run(run_id);
  if (!run) return std::unexpected(run.error());
  if (!is_lease_of(*run, {agent.id, report.lease_token})) return lease_lost(run_id);
  // An agent that refuses the manifest cannot trust its attempt number and reports attempt 0;
  // the lease token alone identifies the attempt then.
  const std::int64_t attempt =
      report.attempt == 0 && report.status == run_status::kFailed ? run->attempt : report.attempt;
  if (run->completed_attempt > 0 && run->completed_attempt == attempt) return {};
  if (cancelled_while_stranded(*run) && run->attempt == attempt)
    return store_late_state(*run, agent, report, tx);
  if (!holds_lease(*run, {agent.id, report.lease_token, attempt})) return lease_lost(run_id);
  TAKOSUMI_TRY(check_report_for_type(*run, report));
  auto created = store_new_state(*run, report);
  if (!created) return std::unexpected(created.error());
  TAKOSUMI_TRY(store_outputs(*run, report, *created));
  TAKOSUMI_TRY(mark_destroyed(*run, report, *created));
  TAKOSUMI_TRY(finish(*run, report, *created));
  const std::string actor = agent_actor(agent.id);
  if (*created)
    TAKOSUMI_TRY(ledger_.audit.record(run_event(actor, "state_version.created", *run,
                                         {{"stateVersionId", (*created)->id},
                                          {"generation", (*created)->generation},
                                          {"partial", (*created)->partial}})));
  TAKOSUMI_TRY(ledger_.record_finished(*run, actor, final_status(report), non_empty(report.failure_code)));
  return tx.commit();
}

}  // namespace takosumi::controlplane
