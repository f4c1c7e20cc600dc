#include "controlplane/store/run_store.hpp"

#include "common/error_codes.hpp"
#include "common/strict_json.hpp"
#include "crypto/random_ids.hpp"
#include "common/failure_codes.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::controlplane {

// Every column but the resource changes (NULL in their place): a plan's changes run to 16 MiB, and
// no reader but GET /api/v1/runs/{id} wants them (RunStore::resource_changes).
const std::string_view kRunSelect =
    "r.id, r.capsule_id, c.workspace_id, r.type, r.status, r.attempt, r.source_commit,"
    " r.planned_by, r.plan_digest, r.plan_artifact_sha256, r.has_changes, r.change_summary,"
    " NULL, r.failure_code, r.failure_message, r.state_version_id, r.tofu_version,"
    " r.provider_lock_sha256, r.env_names, r.phase_millis, r.cancel_requested, r.agent_id,"
    " r.lease_token_sha256, r.lease_expires_at, r.prior_state_version_id, r.prior_generation,"
    " r.completed_attempt, r.created_at, r.started_at, r.finished_at,"
    " r.restores_state_version_id, r.data_loss, r.data_loss_accepted, r.drift, r.refused_outputs,"
    " r.apply_started_attempt, r.dependency_inputs, r.tofu_build, r.spec_revision, r.plan_view_sha256 FROM runs r"
    " JOIN capsules c ON c.id = r.capsule_id";

Run run_from_row(const Statement& s) {
  Run r;
  std::string type;
  ColumnReader(s) >> r.id >> r.capsule_id >> r.workspace_id >> type >> r.status >> r.attempt >>
      r.source_commit >> r.planned_by >> r.plan_digest >> r.plan_artifact_sha256 >>
      r.has_changes >> r.change_summary_json >> r.resource_changes_json >> r.failure_code >>
      r.failure_message >> r.state_version_id >> r.tofu_version >> r.provider_lock_sha256 >>
      r.env_names_json >> r.phase_millis_json >> r.cancel_requested >> r.agent_id >>
      r.lease_token_sha256 >> r.lease_expires_at >> r.prior_state_version_id >>
      r.prior_generation >> r.completed_attempt >> r.created_at >> r.started_at >>
      r.finished_at >> r.restores_state_version_id >> r.data_loss_json >>
      r.data_loss_accepted >> r.drift_json >> r.refused_outputs_json >> r.apply_started_attempt >>
      r.dependency_inputs_json >> r.tofu_build >> r.spec_revision >> r.plan_view_sha256;
  r.type = protocol::run_type_from_string(type).value_or(protocol::RunType::plan);
  return r;
}

Result<Run> RunStore::insert(Run run, const std::optional<std::string>& revision_of) {
  run.id = crypto::new_id("run");
  run.status = std::string(run_status::kQueued);
  run.created_at = clock_.now_unix();
  // The spec revision the Run runs goes with its commit: an apply's is its plan's; a Run of a
  // StateVersion's commit (a rollback, a drift check) takes the revision of the Run that made
  // that StateVersion; any other, the Capsule's as read when its commit was chosen (new_run).
  TAKOSUMI_TRY(db_.run(
      "INSERT INTO runs (id, capsule_id, type, status, source_commit, planned_by, plan_digest,"
      " plan_artifact_sha256, prior_state_version_id, prior_generation, restores_state_version_id,"
      " data_loss, data_loss_accepted, created_at, spec_revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
      " ?, ?, ?, ?, ?, COALESCE((SELECT p.spec_revision FROM runs p WHERE p.id = ?),"
      " (SELECT s.spec_revision FROM runs s WHERE s.id = ?), ?))",
      run.id, run.capsule_id, protocol::to_string(run.type), run.status, run.source_commit,
      run.planned_by, run.plan_digest, run.plan_artifact_sha256, run.prior_state_version_id,
      run.prior_generation, run.restores_state_version_id, run.data_loss_json,
      run.data_loss_accepted, run.created_at, run.planned_by, revision_of, run.spec_revision));
  auto revision = db_.single_integer("SELECT spec_revision FROM runs WHERE id = ?", run.id);
  if (!revision) return std::unexpected(revision.error());
  run.spec_revision = *revision;
  return run;
}

namespace {

Run new_run(const Capsule& capsule, protocol::RunType type, std::string source_commit) {
  Run run;
  run.capsule_id = capsule.id;
  run.workspace_id = capsule.workspace_id;
  run.type = type;
  run.source_commit = std::move(source_commit);
  // The revision of the Capsule as the caller read it when it chose the commit from its ref.
  run.spec_revision = capsule.spec_revision;
  return run;
}

}  // namespace

Result<Run> RunStore::create_plan(const Capsule& capsule, const std::string& source_commit) {
  return insert(new_run(capsule, protocol::RunType::plan, source_commit));
}

Result<Run> RunStore::create_destroy_plan(const Capsule& capsule, const std::string& source_commit) {
  return insert(new_run(capsule, protocol::RunType::destroy_plan, source_commit));
}

Result<Run> RunStore::create_rollback_plan(const Capsule& capsule, const StateVersion& target,
                                           bool target_is_destroyed) {
  if (target.capsule_id != capsule.id)
    return fail(errc::kInvalidArgument, "state version " + target.id + " belongs to capsule " +
                                            target.capsule_id + ", not " + capsule.id);
  auto type = target_is_destroyed ? protocol::RunType::destroy_plan : protocol::RunType::plan;
  Run run = new_run(capsule, type, target.source_commit);
  run.restores_state_version_id = target.id;
  return insert(std::move(run), target.created_by_run_id);
}

Result<std::vector<Run>> RunStore::create_drift_checks(const std::vector<DriftTarget>& targets) {
  Transaction tx(db_);
  TAKOSUMI_TRY(tx.begun());
  std::vector<Run> out;
  for (const auto& [capsule, pinned] : targets) {
    Run run = new_run(capsule, protocol::RunType::drift_check, pinned.source_commit);
    run.prior_state_version_id = pinned.id;
    run.prior_generation = pinned.generation;
    auto created = insert(std::move(run), pinned.created_by_run_id);
    if (!created) return std::unexpected(created.error());
    out.push_back(std::move(*created));
  }
  TAKOSUMI_TRY(tx.commit());
  return out;
}

Result<Run> RunStore::create_apply(const Run& plan, bool data_loss_accepted) {
  Run run;
  run.capsule_id = plan.capsule_id;
  run.workspace_id = plan.workspace_id;
  run.type = protocol::RunType::apply;
  run.source_commit = plan.source_commit;
  run.planned_by = plan.id;
  run.plan_digest = plan.plan_digest;
  run.plan_artifact_sha256 = plan.plan_artifact_sha256;
  run.restores_state_version_id = plan.restores_state_version_id;
  run.data_loss_json = plan.data_loss_json;
  run.data_loss_accepted = data_loss_accepted;
  auto created = insert(std::move(run));
  if (!created && created.error().code == errc::kConflict)
    return fail(errc::kConflict, "an apply was already created for run " + plan.id);
  return created;
}

Result<Run> RunStore::get_run(std::string_view id) {
  return one_row(db_.query("SELECT " + std::string(kRunSelect) + " WHERE r.id = ?", id),
                 "run " + std::string(id), run_from_row);
}

Result<std::string> RunStore::resource_changes(std::string_view run_id) {
  auto changes = one_row(db_.query("SELECT resource_changes FROM runs WHERE id = ?", run_id),
                         "run " + std::string(run_id),
                         [](const Statement& s) { return s.optional_text(0); });
  if (!changes) return std::unexpected(changes.error());
  return changes->value_or("[]");
}

Status RunStore::set_dependency_inputs(std::string_view run_id,
                                       std::optional<std::string> inputs_json) {
  return db_.run("UPDATE runs SET dependency_inputs = ? WHERE id = ?", inputs_json, run_id);
}

Result<std::vector<Run>> RunStore::list_runs(std::string_view capsule_id, int limit) {
  auto s = db_.query("SELECT " + std::string(kRunSelect) +
                         " WHERE r.capsule_id = ? ORDER BY r.rowid DESC LIMIT ?",
                     capsule_id, limit);
  return collect(std::move(s), run_from_row);
}

Result<std::vector<Run>> RunStore::list_running(std::string_view capsule_id) {
  auto s = db_.query("SELECT " + std::string(kRunSelect) +
                         " WHERE r.capsule_id = ? AND r.status = 'running' ORDER BY r.rowid",
                     capsule_id);
  return collect(std::move(s), run_from_row);
}

Result<std::optional<Run>> RunStore::latest_succeeded_plan(std::string_view capsule_id) {
  auto s = db_.query("SELECT " + std::string(kRunSelect) +
                         " WHERE r.capsule_id = ? AND r.type IN ('plan', 'destroy_plan')"
                         " AND r.status = 'succeeded' ORDER BY r.rowid DESC LIMIT 1",
                     capsule_id);
  auto found = collect(std::move(s), run_from_row);
  if (!found) return std::unexpected(found.error());
  if (found->empty()) return std::optional<Run>{};
  return std::optional<Run>(std::move(found->front()));
}

Result<std::vector<std::string>> RunStore::sensitive_outputs(std::string_view capsule_id) {
  auto s = db_.query("SELECT refused_outputs FROM runs r WHERE r.capsule_id = ?"
                     " AND r.type IN ('apply', 'plan') AND r.status = 'succeeded'"
                     " ORDER BY r.rowid DESC LIMIT 1",
                     capsule_id);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  std::vector<std::string> names;
  if (!*row || s->is_null(0)) return names;
  // Written by run_completion from a checked report; anything else there is not ours to trust.
  auto refused = parse_json_strict(s->text(0));
  if (!refused || !refused->is_array()) return names;
  for (const auto& item : refused->get_array()) {
    const auto* o = item.if_object();
    if (!o) continue;
    const auto* name = o->if_contains("name");
    const auto* reason = o->if_contains("reason");
    if (name && name->is_string() && reason && reason->is_string() &&
        reason->get_string() == protocol::kSensitiveOutputReason)
      names.emplace_back(name->get_string());
  }
  return names;
}

Result<bool> RunStore::destroy_pending(std::string_view capsule_id) {
  auto s = db_.query("SELECT 1 FROM runs a JOIN runs p ON p.id = a.planned_by"
                     " WHERE a.capsule_id = ? AND a.type = 'apply'"
                     " AND a.status IN ('queued', 'running') AND p.type = 'destroy_plan' LIMIT 1",
                     capsule_id);
  if (!s) return std::unexpected(s.error());
  return s->step();
}

Status RunStore::import_finished(const Run& run) {
  return db_.run(
      "INSERT INTO runs (id, capsule_id, type, status, source_commit, planned_by, attempt,"
      " completed_attempt, created_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, 1, 1, ?, ?)"
      " ON CONFLICT (id) DO NOTHING",
      run.id, run.capsule_id, protocol::to_string(run.type), run.status, run.source_commit,
      run.planned_by, run.created_at, run.finished_at);
}

Result<std::optional<Run>> RunStore::latest_apply_of(std::string_view plan_run_id) {
  auto found = collect(db_.query("SELECT " + std::string(kRunSelect) +
                                     " WHERE r.planned_by = ? AND r.type = 'apply'"
                                     " ORDER BY r.rowid DESC LIMIT 1",
                                 plan_run_id),
                       run_from_row);
  if (!found) return std::unexpected(found.error());
  if (found->empty()) return std::optional<Run>{};
  return std::optional<Run>(std::move(found->front()));
}

Result<bool> RunStore::is_destroy_result(const StateVersion& sv) {
  auto s = db_.query(
      "SELECT 1 FROM runs a JOIN runs p ON p.id = a.planned_by"
      " WHERE a.id = ? AND a.status = 'succeeded' AND p.type = 'destroy_plan'",
      sv.created_by_run_id);
  if (!s) return std::unexpected(s.error());
  return s->step();
}

Result<bool> RunStore::apply_exists_for(std::string_view plan_run_id) {
  auto s = db_.query("SELECT 1 FROM runs WHERE planned_by = ?", plan_run_id);
  if (!s) return std::unexpected(s.error());
  return s->step();
}

Result<Run> RunStore::cancel(std::string_view id) {
  auto run = get_run(id);
  if (!run) return run;
  if (run->finished())
    return fail(errc::kConflict, "run " + run->id + " already finished with status " + run->status);
  if (run->status == run_status::kQueued) {
    TAKOSUMI_TRY(db_.run(
        "UPDATE runs SET status = 'cancelled', cancel_requested = 1, failure_code = ?,"
        " failure_message = 'cancelled before it started', finished_at = ?"
        " WHERE id = ? AND status = 'queued'",
        errc::kCancelled, clock_.now_unix(), run->id));
  } else {
    TAKOSUMI_TRY(db_.run("UPDATE runs SET cancel_requested = 1 WHERE id = ?", run->id));
  }
  return get_run(id);
}

Result<bool> RunStore::record_artifact(std::string_view run_id, std::string_view kind,
                                       std::string_view sha256, std::int64_t size) {
  // A plan view is redacted JSON, not an envelope: it has a table of its own (schema v18).
  if (kind == "plan_view")
    TAKOSUMI_TRY(db_.run("INSERT INTO plan_views (run_id, sha256, size, created_at)"
                         " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                         run_id, sha256, size, clock_.now_unix()));
  else
    TAKOSUMI_TRY(db_.run(
        "INSERT INTO artifacts (run_id, kind, sha256, size, created_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        run_id, kind, sha256, size, clock_.now_unix()));
  return db_.changes() > 0;
}

Status RunStore::keep_result(const Run& run, std::string_view agent_id, std::string_view sha256,
                             std::string_view code) {
  return db_.run(
      "INSERT INTO kept_results (run_id, sha256, capsule_id, agent_id, code, created_at)"
      " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
      run.id, sha256, run.capsule_id, agent_id, code, clock_.now_unix());
}

Status RunStore::record_bundle(const Run& run, std::string_view agent_id, std::string_view sha256) {
  return db_.run("INSERT INTO run_bundles (run_id, attempt, agent_id, sha256, created_at)"
                 " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                 run.id, run.attempt, agent_id, sha256, clock_.now_unix());
}

Result<std::optional<std::string>> RunStore::bundle_of(std::string_view run_id, std::int64_t attempt,
                                                       std::string_view agent_id) {
  auto s = db_.query("SELECT sha256 FROM run_bundles WHERE run_id = ? AND attempt = ? AND agent_id = ?",
                     run_id, attempt, agent_id);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<std::string>{};
  return std::optional<std::string>(s->text(0));
}

Result<std::vector<KeptResult>> RunStore::kept_results(std::string_view capsule_id,
                                                       std::int64_t since) {
  return collect(db_.query("SELECT run_id, sha256, agent_id, code, created_at FROM kept_results"
                           " WHERE capsule_id = ? AND created_at >= ? ORDER BY created_at, run_id",
                           capsule_id, since),
                 [](const Statement& row) {
                   KeptResult k;
                   ColumnReader(row) >> k.run_id >> k.sha256 >> k.agent_id >> k.code >> k.created_at;
                   return k;
                 });
}

Result<bool> RunStore::has_artifact(std::string_view run_id, std::string_view kind,
                                    std::string_view sha256) {
  auto s = db_.query("SELECT 1 FROM artifacts WHERE run_id = ? AND kind = ? AND sha256 = ?",
                     run_id, kind, sha256);
  if (!s) return std::unexpected(s.error());
  return s->step();
}

Result<std::int64_t> RunStore::end_leases_of(std::string_view agent_id, std::int64_t now) {
  TAKOSUMI_TRY(db_.run("UPDATE runs SET lease_expires_at = ? WHERE agent_id = ?"
                       " AND status = 'running' AND lease_expires_at > ?",
                       now, agent_id, now));
  return db_.changes();
}

}  // namespace takosumi::controlplane
