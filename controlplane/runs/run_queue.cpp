#include "controlplane/runs/run_queue.hpp"

#include <spdlog/spdlog.h>

#include "common/error_codes.hpp"
#include "protocol/api_error_codes.hpp"
#include "controlplane/store/capsule_spec.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

std::optional<std::string> non_empty(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

bool is_hex64(std::string_view s) {
  return s.size() == 64 &&
         s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::unexpected<Error> lease_lost(std::string_view run_id) {
  return fail(errc::kLeaseLost,
              "run " + std::string(run_id) + ": this agent no longer holds the lease");
}

// A drift_check reports on the StateVersion it was created for; once another one is current, its
// answer would describe a state nobody uses any more.
std::optional<Error> drift_pin_broken(const Run& run, const std::optional<StateVersion>& current) {
  if (run.type != protocol::RunType::drift_check) return std::nullopt;
  if (current && run.prior_state_version_id == current->id) return std::nullopt;
  const std::string now = current ? "generation " + std::to_string(current->generation) : "no state";
  return Error{std::string(api_errc::kStateVersionSuperseded),
               "drift check " + run.id + " was pinned to generation " +
                   std::to_string(run.prior_generation.value_or(0)) + " but the capsule is at " +
                   now + " now; start a new drift check"};
}

// Why a running Run whose lease expired ends instead of being claimed again, if it does. A
// stranded apply reaches here only when cancel was requested (next_candidate skips it otherwise),
// so kMaxAttempts never ends one: its agent may still report what it changed.
std::optional<Error> expired_lease_end(const Run& run, std::int64_t now) {
  if (run.cancel_requested && run.stranded(now))
    return Error{std::string(errc::kCancelled),
                 "cancel requested after the apply (attempt " + std::to_string(run.attempt) +
                     ") was interrupted: agent " + run.agent_id.value_or("?") +
                     " never reported back, so the real resources may have changed and their"
                     " state may be held by that agent; run `takosumi-agent recover` on its host"};
  if (run.cancel_requested)
    return Error{std::string(errc::kCancelled), "cancel requested and the lease expired"};
  if (run.attempt >= kMaxAttempts)
    return Error{std::string(errc::kLeaseLost),
                 "lease expired " + std::to_string(run.attempt) + " times"};
  return std::nullopt;
}

std::string final_status(const protocol::RunReport& report) {
  if (report.status == run_status::kSucceeded) return std::string(run_status::kSucceeded);
  if (report.failure_code == errc::kCancelled) return std::string(run_status::kCancelled);
  return std::string(run_status::kFailed);
}

}  // namespace

Result<std::vector<Job>> RunQueue::claim(const Agent& agent, int max_jobs,
                                         const ManifestFactory& build) {
  std::vector<Job> jobs;
  // Each step either claims a Run or finishes one, so the loop ends; the bound is a backstop.
  for (int steps = 0; static_cast<int>(jobs.size()) < max_jobs && steps < 1000; ++steps) {
    auto step = claim_one(agent, build);
    if (!step) return std::unexpected(step.error());
    if (step->exhausted) break;
    if (step->job) jobs.push_back(std::move(*step->job));
  }
  return jobs;
}

Result<std::optional<Run>> RunQueue::next_candidate(std::int64_t now) {
  // A stranded apply (Run::stranded) is no candidate unless cancel was requested, so claim_one
  // never meets one it must leave alone, and it blocks its Capsule as a live lease does: a later
  // Run would start from a state that is missing what the stranded apply changed.
  auto s = db_.query(
      "SELECT " + std::string(kRunSelect) +
          " WHERE (r.status = 'queued' OR (r.status = 'running' AND r.lease_expires_at <= ?1"
          "   AND (r.apply_started_attempt IS NOT r.attempt OR r.cancel_requested = 1)))"
          " AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.capsule_id = r.capsule_id"
          "   AND o.id <> r.id AND o.status = 'running'"
          "   AND (o.lease_expires_at > ?1 OR o.apply_started_attempt = o.attempt))"
          " ORDER BY r.rowid LIMIT 1",
      now);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<Run>{};
  return std::optional<Run>(run_from_row(*s));
}

Result<RunQueue::ClaimStep> RunQueue::claim_one(const Agent& agent, const ManifestFactory& build) {
  const std::int64_t now = clock_.now_unix();
  std::optional<Run> unbuildable;
  Error build_error;
  {
    Transaction tx(db_);
    TAKOSUMI_TRY(tx.begun());
    auto candidate = next_candidate(now);
    if (!candidate) return std::unexpected(candidate.error());
    if (!*candidate) return ClaimStep{true, std::nullopt};
    const Run& run = **candidate;
    auto end = run.status == run_status::kRunning ? expired_lease_end(run, now) : std::nullopt;
    if (end) {
      const bool cancelled = end->code == errc::kCancelled;
      TAKOSUMI_TRY(fail_run(run, cancelled ? run_status::kCancelled : run_status::kFailed, *end,
                            kControlPlaneActor));
      // The stranded apply's agent may still bring the state it changed: its report stays
      // acceptable (complete() stores the state), so the attempt is not marked completed.
      if (run.stranded(now))
        TAKOSUMI_TRY(db_.run("UPDATE runs SET completed_attempt = 0 WHERE id = ?", run.id));
      TAKOSUMI_TRY(tx.commit());
      return ClaimStep{};
    }
    auto prior = states_.current(run.capsule_id);
    if (!prior) return std::unexpected(prior.error());
    if (auto broken = drift_pin_broken(run, *prior)) {
      TAKOSUMI_TRY(fail_run(run, run_status::kFailed, *broken, kControlPlaneActor));
      TAKOSUMI_TRY(tx.commit());
      return ClaimStep{};
    }
    auto refused = refuse_for_connections(run, agent);
    if (!refused) return std::unexpected(refused.error());
    if (*refused) {
      TAKOSUMI_TRY(tx.commit());
      return ClaimStep{};
    }
    auto step = dispatch(run, agent, std::move(*prior), build);
    if (step) {
      TAKOSUMI_TRY(tx.commit());
      return step;
    }
    unbuildable = run;
    build_error = step.error();
  }  // the claim is rolled back; the Run fails on its own below
  spdlog::warn("run {} cannot be dispatched: {}", unbuildable->id, build_error.to_string());
  TAKOSUMI_TRY(in_transaction(db_, [&]() -> Status {
    if (build_error.code == errc::kConnectionRevoked || build_error.code == errc::kConnectionExpired)
      TAKOSUMI_TRY(audit_.record(run_event(kControlPlaneActor, "run.refused", *unbuildable,
                                           {{"code", build_error.code}, {"agentId", agent.id}})));
    return fail_run(*unbuildable, run_status::kFailed, build_error, kControlPlaneActor);
  }));
  return ClaimStep{};
}

// Leases the Run to the agent and builds its manifest; an error here is the manifest's, and the
// caller rolls the lease back.
Result<RunQueue::ClaimStep> RunQueue::dispatch(const Run& run, const Agent& agent,
                                               std::optional<StateVersion> prior,
                                               const ManifestFactory& build) {
  if (run.status == run_status::kRunning)
    TAKOSUMI_TRY(audit_.record(run_event(kControlPlaneActor, "run.lease_expired", run,
                                         {{"attempt", run.attempt},
                                          {"agentId", run.agent_id.value_or("")}})));
  const std::int64_t now = clock_.now_unix();
  const std::string token = crypto::new_token();
  const std::int64_t expires = now + lease_seconds_;
  std::optional<std::string> prior_id;
  std::int64_t prior_generation = 0;
  if (prior) {
    prior_id = prior->id;
    prior_generation = prior->generation;
  }
  TAKOSUMI_TRY(db_.run(
      "UPDATE runs SET status = 'running', attempt = attempt + 1, agent_id = ?,"
      " lease_token_sha256 = ?, lease_expires_at = ?, started_at = COALESCE(started_at, ?),"
      " prior_state_version_id = ?, prior_generation = ? WHERE id = ?",
      agent.id, crypto::token_sha256(token), expires, now, prior_id, prior_generation, run.id));
  auto updated = runs_.get_run(run.id);
  if (!updated) return std::unexpected(updated.error());
  ClaimedRun claimed{std::move(*updated), token, expires, std::move(prior)};
  auto manifest = build(claimed);
  if (!manifest) return std::unexpected(manifest.error());
  TAKOSUMI_TRY(audit_.record(run_event(agent_actor(agent.id), "run.claimed", claimed.run,
                                       {{"agentId", agent.id}, {"attempt", claimed.run.attempt}})));
  return ClaimStep{false, Job{std::move(claimed), std::move(*manifest)}};
}

Result<bool> RunQueue::refuse_for_connections(const Run& run, const Agent& agent) {
  auto capsule = catalog_.get_capsule(run.capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  auto refusal = connections_.first_unusable(*capsule);
  if (!refusal) return std::unexpected(refusal.error());
  if (!*refusal) return false;
  auto event = run_event(kControlPlaneActor, "run.refused", run,
                         {{"code", (*refusal)->error.code}, {"agentId", agent.id}});
  event.connection_id = (*refusal)->connection_id;
  TAKOSUMI_TRY(audit_.record(std::move(event)));
  TAKOSUMI_TRY(fail_run(run, run_status::kFailed, (*refusal)->error, kControlPlaneActor));
  return true;
}

Status RunQueue::fail_run(const Run& run, std::string_view status, const Error& why,
                          std::string_view actor) {
  TAKOSUMI_TRY(db_.run(
      "UPDATE runs SET status = ?, failure_code = ?, failure_message = ?, finished_at = ?,"
      " completed_attempt = attempt, lease_expires_at = NULL WHERE id = ?",
      status, why.code, why.message, clock_.now_unix(), run.id));
  return record_finished(run, actor, status, why.code);
}

// Status and failure code only: a failure message may quote tool output, so it stays on the Run.
Status RunQueue::record_finished(const Run& run, std::string_view actor, std::string_view status,
                                 const std::optional<std::string>& failure_code) {
  boost::json::value code = nullptr;
  if (failure_code) code = *failure_code;
  return audit_.record(run_event(actor, "run.finished", run,
                                 {{"status", std::string(status)}, {"failureCode", std::move(code)}}));
}

Result<Run> RunQueue::check_lease(std::string_view run_id, const Agent& agent,
                                  std::string_view lease_token) {
  auto run = runs_.get_run(run_id);
  if (!run) return run;
  if (run->status != run_status::kRunning || run->agent_id != agent.id ||
      run->lease_token_sha256 != crypto::token_sha256(lease_token))
    return lease_lost(run_id);
  return run;
}

Result<Run> RunQueue::check_upload_lease(std::string_view run_id, const Agent& agent,
                                         std::string_view lease_token) {
  auto run = runs_.get_run(run_id);
  if (!run) return run;
  const bool late_stranded = run->status == run_status::kCancelled &&
                             run->apply_started_attempt == run->attempt &&
                             run->completed_attempt == 0;
  if ((run->status != run_status::kRunning && !late_stranded) || run->agent_id != agent.id ||
      run->lease_token_sha256 != crypto::token_sha256(lease_token))
    return lease_lost(run_id);
  return run;
}

Result<LeaseRenewal> RunQueue::start_apply(std::string_view run_id, const Agent& agent,
                                           std::string_view lease_token, std::int64_t attempt) {
  auto started = start_apply_in_transaction(run_id, agent, lease_token, attempt);
  if (!started && started.error().code == errc::kLeaseLost)
    record_fenced(run_id, agent, attempt, "phase");
  return started;
}

// The lease must be live: once it expired the Run may be claimed by another agent at any moment,
// and an apply started now could race that agent's. A repeat for an attempt already announced is
// accepted even after expiry: that Run is stranded, so nobody else can have claimed it.
Result<LeaseRenewal> RunQueue::start_apply_in_transaction(std::string_view run_id,
                                                          const Agent& agent,
                                                          std::string_view lease_token,
                                                          std::int64_t attempt) {
  Transaction tx(db_);
  TAKOSUMI_TRY(tx.begun());
  auto run = runs_.get_run(run_id);
  if (!run) return std::unexpected(run.error());
  const std::int64_t now = clock_.now_unix();
  const bool repeat = run->apply_started();
  const bool live = run->lease_expires_at && *run->lease_expires_at > now;
  if (run->status != run_status::kRunning || run->agent_id != agent.id ||
      run->lease_token_sha256 != crypto::token_sha256(lease_token) || run->attempt != attempt ||
      !(live || repeat))
    return lease_lost(run_id);
  if (run->type != protocol::RunType::apply)
    return fail(errc::kInvalidArgument, "run " + run->id + " is a " +
                                            std::string(protocol::to_string(run->type)) +
                                            " run: only an apply announces the apply phase");
  const std::int64_t expires = now + lease_seconds_;
  TAKOSUMI_TRY(db_.run(
      "UPDATE runs SET apply_started_attempt = ?, lease_expires_at = ? WHERE id = ?", attempt,
      expires, run->id));
  if (!repeat)
    TAKOSUMI_TRY(audit_.record(run_event(agent_actor(agent.id), "run.apply_started", *run,
                                         {{"agentId", agent.id}, {"attempt", attempt}})));
  TAKOSUMI_TRY(tx.commit());
  return LeaseRenewal{expires, run->cancel_requested};
}

void RunQueue::record_fenced(std::string_view run_id, const Agent& agent,
                             std::optional<std::int64_t> attempt, std::string_view call) {
  auto recorded = in_transaction(db_, [&]() -> Status {
    auto run = runs_.get_run(run_id);
    if (!run) return run.error().code == errc::kNotFound ? Status{} : std::unexpected(run.error());
    boost::json::value reported = nullptr;
    if (attempt) reported = *attempt;
    return audit_.record(run_event(agent_actor(agent.id), "run.fenced", *run,
                                   {{"agentId", agent.id},
                                    {"attempt", std::move(reported)},
                                    {"currentAttempt", run->attempt},
                                    {"call", std::string(call)}}));
  });
  if (!recorded)
    spdlog::warn("run {}: recording the fenced {} of agent {} failed: {}", run_id, call, agent.id,
                 recorded.error().to_string());
}

Result<LeaseRenewal> RunQueue::heartbeat(std::string_view run_id, const Agent& agent,
                                         std::string_view lease_token) {
  auto run = check_lease(run_id, agent, lease_token);
  if (!run) return std::unexpected(run.error());
  const std::int64_t expires = clock_.now_unix() + lease_seconds_;
  TAKOSUMI_TRY(db_.run("UPDATE runs SET lease_expires_at = ? WHERE id = ?", expires, run->id));
  return LeaseRenewal{expires, run->cancel_requested};
}

Status RunQueue::release(std::string_view run_id, const Agent& agent, std::string_view lease_token) {
  return in_transaction(db_, [&]() -> Status {
    auto run = check_lease(run_id, agent, lease_token);
    if (!run) return std::unexpected(run.error());
    if (run->status != run_status::kRunning || run->apply_started_attempt == run->attempt ||
        run->completed_attempt == run->attempt)
      return lease_lost(run_id);
    TAKOSUMI_TRY(db_.run(
        "UPDATE runs SET status = 'queued', attempt = attempt - 1, agent_id = NULL,"
        " lease_token_sha256 = NULL, lease_expires_at = NULL,"
        " started_at = CASE WHEN attempt = 1 THEN NULL ELSE started_at END WHERE id = ?",
        run->id));
    return audit_.record(run_event(kControlPlaneActor, "run.released", *run,
                                   {{"agentId", agent.id}, {"attempt", run->attempt}}));
  });
}

Status RunQueue::check_plan_report(const Run& run, const protocol::RunReport& report) {
  if (report.new_state)
    return fail(errc::kInvalidArgument, "newState is only accepted from apply runs");
  if (report.status != run_status::kSucceeded || !report.has_changes) return {};
  if (!is_hex64(report.plan_digest))
    return fail(errc::kInvalidArgument, "a plan with changes needs planDigest (64 hex)");
  auto stored = runs_.has_artifact(run.id, "plan", report.plan_artifact_sha256);
  if (!stored) return std::unexpected(stored.error());
  if (!*stored)
    return fail(errc::kInvalidArgument, "planArtifactSha256 \"" + report.plan_artifact_sha256 +
                                            "\" was not uploaded for run " + run.id);
  return {};
}

Status RunQueue::check_report_for_type(const Run& run, const protocol::RunReport& report) {
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

Result<std::optional<StateVersion>> RunQueue::store_new_state(const Run& run,
                                                              const protocol::RunReport& report) {
  if (!report.new_state) return std::optional<StateVersion>{};
  const auto& ns = *report.new_state;
  auto stored = runs_.has_artifact(run.id, "state", ns.artifact_sha256);
  if (!stored) return std::unexpected(stored.error());
  if (!*stored)
    return fail(errc::kInvalidArgument, "newState.artifactSha256 \"" + ns.artifact_sha256 +
                                            "\" was not uploaded for run " + run.id);
  auto current = states_.current(run.capsule_id);
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
  sv.lineage = ns.lineage;
  sv.plaintext_sha256 = ns.plaintext_sha256;
  sv.ciphertext_sha256 = ns.artifact_sha256;
  sv.restored_from = run.restores_state_version_id;
  // A failed, cancelled or interrupted apply may have created resources before it stopped: its
  // state is kept, so nothing it created is forgotten, but marked as not the plan's result.
  sv.partial = report.status != run_status::kSucceeded;
  auto appended = states_.append(std::move(sv));
  if (!appended) return std::unexpected(appended.error());
  return std::optional<StateVersion>(std::move(*appended));
}

Status RunQueue::store_outputs(const Run& run, const protocol::RunReport& report,
                               const std::optional<StateVersion>& created) {
  if (run.type != protocol::RunType::apply || report.status != run_status::kSucceeded) return {};
  auto capsule = catalog_.get_capsule(run.capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  std::optional<StateVersion> version = created;
  if (!version) {
    auto current = states_.current(run.capsule_id);
    if (!current) return std::unexpected(current.error());
    version = std::move(*current);
  }
  auto outputs = filter_outputs(report.outputs, capsule->output_allowlist);
  if (!outputs) return std::unexpected(outputs.error());
  return states_.set_outputs(run.capsule_id, run.id, version, std::move(*outputs));
}

Status RunQueue::mark_destroyed(const Run& run, const protocol::RunReport& report,
                                const std::optional<StateVersion>& created) {
  if (!created || !run.planned_by) return {};
  auto plan = runs_.get_run(*run.planned_by);
  if (!plan) return std::unexpected(plan.error());
  const bool destroyed =
      plan->type == protocol::RunType::destroy_plan && report.status == run_status::kSucceeded;
  std::optional<std::int64_t> at;
  if (destroyed) at = clock_.now_unix();
  return catalog_.set_destroyed(run.capsule_id, at);
}

Status RunQueue::finish(const Run& run, const protocol::RunReport& report,
                        const std::optional<StateVersion>& created) {
  const auto j = protocol::to_json(report);
  const bool read_only = run.type == protocol::RunType::drift_check;
  std::optional<std::string> sv_id;
  if (created) sv_id = created->id;
  // An apply keeps the marks copied from its plan; plans store what their report found.
  std::optional<std::string> data_loss = run.data_loss_json;
  if (run.type != protocol::RunType::apply) data_loss = protocol::serialize(j.at("dataLoss"));
  std::optional<std::string> drift;
  if (read_only && report.drift) drift = protocol::serialize(j.at("drift"));
  std::optional<std::string> plan_digest, plan_artifact;
  if (!read_only) {
    plan_digest = non_empty(report.plan_digest);
    plan_artifact = non_empty(report.plan_artifact_sha256);
  }
  return db_.run(
      "UPDATE runs SET status = ?, completed_attempt = ?, finished_at = ?, failure_code = ?,"
      " failure_message = ?, has_changes = ?, change_summary = ?, resource_changes = ?,"
      " plan_digest = COALESCE(plan_digest, ?), plan_artifact_sha256 ="
      " COALESCE(plan_artifact_sha256, ?), state_version_id = ?, tofu_version = ?,"
      " provider_lock_sha256 = ?, env_names = ?, phase_millis = ?, data_loss = ?, drift = ?,"
      " refused_outputs = ?, lease_expires_at = NULL WHERE id = ?",
      final_status(report), run.attempt, clock_.now_unix(), non_empty(report.failure_code),
      non_empty(report.failure_message), report.has_changes,
      protocol::serialize(j.at("changeSummary")), protocol::serialize(j.at("resourceChanges")),
      plan_digest, plan_artifact, sv_id, non_empty(report.tofu_version),
      non_empty(report.provider_lock_sha256), protocol::serialize(j.at("envNames")),
      protocol::serialize(j.at("phaseMillis")), data_loss, drift,
      protocol::serialize(j.at("refusedOutputs")), run.id);
}

// The report of a stranded apply that was cancelled while its agent was away: the Run stays
// cancelled, but the state the apply changed is kept (partial) so nothing it created is forgotten.
// A newState that no longer starts from the current generation is refused (conflict): the agent
// keeps it for the operator.
Status RunQueue::store_late_state(const Run& run, const Agent& agent,
                                  const protocol::RunReport& report, Transaction& tx) {
  protocol::RunReport late = report;
  if (late.status == run_status::kSucceeded) late.status = run_status::kFailed;  // partial anyway
  auto created = store_new_state(run, late);
  if (!created) return std::unexpected(created.error());
  TAKOSUMI_TRY(db_.run("UPDATE runs SET completed_attempt = attempt, state_version_id = ? WHERE id = ?",
                       *created ? std::optional<std::string>((*created)->id) : std::nullopt, run.id));
  if (*created)
    TAKOSUMI_TRY(audit_.record(run_event(agent_actor(agent.id), "state_version.created", run,
                                         {{"stateVersionId", (*created)->id},
                                          {"generation", (*created)->generation},
                                          {"partial", true},
                                          {"late", true}})));
  return tx.commit();
}

Status RunQueue::complete(std::string_view run_id, const Agent& agent,
                          const protocol::RunReport& report) {
  auto done = complete_in_transaction(run_id, agent, report);
  if (!done && done.error().code == errc::kLeaseLost)
    record_fenced(run_id, agent, report.attempt, "complete");
  return done;
}

Status RunQueue::complete_in_transaction(std::string_view run_id, const Agent& agent,
                                         const protocol::RunReport& report) {
  Transaction tx(db_);
  TAKOSUMI_TRY(tx.begun());
  auto run = runs_.get_run(run_id);
  if (!run) return std::unexpected(run.error());
  if (run->agent_id != agent.id || run->lease_token_sha256 != crypto::token_sha256(report.lease_token))
    return lease_lost(run_id);
  // An agent that refuses the manifest cannot trust its attempt number and reports attempt 0;
  // the lease token alone identifies the attempt then.
  const std::int64_t attempt =
      report.attempt == 0 && report.status == run_status::kFailed ? run->attempt : report.attempt;
  if (run->completed_attempt > 0 && run->completed_attempt == attempt) return {};
  if (run->status == run_status::kCancelled && run->apply_started_attempt == attempt &&
      run->attempt == attempt)
    return store_late_state(*run, agent, report, tx);
  if (run->status != run_status::kRunning || run->attempt != attempt) return lease_lost(run_id);
  TAKOSUMI_TRY(check_report_for_type(*run, report));
  auto created = store_new_state(*run, report);
  if (!created) return std::unexpected(created.error());
  TAKOSUMI_TRY(store_outputs(*run, report, *created));
  TAKOSUMI_TRY(mark_destroyed(*run, report, *created));
  TAKOSUMI_TRY(finish(*run, report, *created));
  const std::string actor = agent_actor(agent.id);
  if (*created)
    TAKOSUMI_TRY(audit_.record(run_event(actor, "state_version.created", *run,
                                         {{"stateVersionId", (*created)->id},
                                          {"generation", (*created)->generation},
                                          {"partial", (*created)->partial}})));
  TAKOSUMI_TRY(record_finished(*run, actor, final_status(report), non_empty(report.failure_code)));
  return tx.commit();
}

}  // namespace takosumi::controlplane
