// Claiming: the next candidate, the reasons a candidate ends instead of being dispatched, and
// the lease handed out with its manifest.
#include <spdlog/spdlog.h>

#include "common/error_codes.hpp"
#include "controlplane/runs/run_claims.hpp"
#include "controlplane/store/agent_pool_store.hpp"
#include "crypto/random_ids.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

// A drift_check reports on the StateVersion it was created for; once another one is current, its
// answer would describe a state nobody uses any more.
std::optional<Error> drift_pin_broken(const Run& run, const std::optional<StateVersion>& current) {
  if (run.type != protocol::RunType::drift_check) return std::nullopt;
  if (current && run.prior_state_version_id == current->id) return std::nullopt;
  const std::string now = current ? "generation " + std::to_string(current->generation) : "no state";
  return Error{std::string(errc::kStateVersionSuperseded),
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

// The first Run a candidates query finds, if any.
Result<std::optional<Run>> first_run(Result<Statement> s) {
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<Run>{};
  return std::optional<Run>(run_from_row(*s));
}

// A claim that loses this many races for Capsules in a row (each lost to another claim's commit)
// answers with what it has; the agent's poll looks again within a second.
constexpr int kMaxClaimRaces = 64;

}  // namespace

Result<std::vector<Job>> RunClaims::claim(const Agent& agent, int max_jobs,
                                         const ManifestFactory& build) {
  std::vector<Job> jobs;
  // Each step either claims a Run or finishes one, so the loop ends; the bound is a backstop.
  for (int steps = 0; static_cast<int>(jobs.size()) < max_jobs && steps < 1000; ++steps) {
    auto step = claim_one(agent, build);
    // Runs leased already in this call are committed: they go to the agent, whatever failed
    // after them (otherwise each would wait out its lease and lose an attempt).
    if (!step && jobs.empty()) return std::unexpected(step.error());
    if (!step) {
      spdlog::warn("claim for agent {}: {} (answering with the {} Run(s) claimed before)",
                   agent.id, step.error().to_string(), jobs.size());
      break;
    }
    if (step->exhausted) break;
    if (step->job) jobs.push_back(std::move(*step->job));
  }
  return jobs;
}

Result<std::optional<Run>> RunClaims::next_candidate(std::int64_t now, const Agent& agent) {
  // A stranded apply (Run::stranded) is no candidate unless cancel was requested, so claim_one
  // never meets one it must leave alone, and it blocks its Capsule as a live lease does: a later
  // Run would start from a state that is missing what the stranded apply changed.
  // Only Runs of Capsules in the agent's pool, whose Workspace may use that pool, and every one
  // of whose required labels the agent has (?3 is ",a,b,": agent_label_list). Matched in SQL, so
  // Runs no agent can take cost a claim nothing however many wait.
  const std::string instr = ledger_.db.driver() == StoreDriver::sqlite ? "instr" : "takosumi_instr";
  const std::string candidates =
      "SELECT " + std::string(kRunSelect) + " WHERE" + std::string(kWaitingForAgent) + " AND" +
      std::string(kCapsuleFree) + " AND c.agent_pool = ?2 AND" + std::string(kPoolUsable) +
      " AND NOT EXISTS (SELECT 1 FROM capsule_agent_labels l WHERE l.capsule_id = c.id"
      "   AND " + instr + "(?3, ',' || l.label || ',') = 0)";
  constexpr std::string_view kOldest = " ORDER BY r.rowid LIMIT 1";
  const std::string labels = agent_label_list(agent.labels);
  if (!ledger_.db.in_shared_claim())
    return first_run(ledger_.db.query(candidates + std::string(kOldest), now, agent.pool, labels));
  // Claims on PostgreSQL run side by side (WriterLock::claim); only claims write while they do.
  // Each locks the Capsule of the Run it would lease and passes over Capsules another claim
  // holds, so two never lease Runs of one Capsule. This statement's snapshot may predate the
  // commit of a claim that held the lock until just now (its kCapsuleFree is then stale for that
  // Capsule), so the Capsule's candidate is read again by a statement of its own, which sees that
  // commit. Finding none there means such a claim leased it: look again, past it.
  for (int tries = 0; tries < kMaxClaimRaces; ++tries) {
    auto locked = first_run(ledger_.db.query(candidates + std::string(kOldest) +
                                          " FOR NO KEY UPDATE OF c SKIP LOCKED",
                                      now, agent.pool, labels));
    if (!locked || !*locked) return locked;
    auto fresh = first_run(ledger_.db.query(candidates + " AND c.id = ?4" + std::string(kOldest), now,
                                     agent.pool, labels, (*locked)->capsule_id));
    if (!fresh || *fresh) return fresh;
  }
  return std::optional<Run>{};
}

Result<RunClaims::ClaimStep> RunClaims::claim_one(const Agent& agent, const ManifestFactory& build) {
  const std::int64_t now = ledger_.clock.now_unix();
  // Most claims find nothing (a long poll looks again every second; a queued Run wakes a poll of
  // each pool on every replica): they look first without the writers' lock, so only a claim with
  // something to take waits for it, and the other writers (a Run being queued, a report) do not
  // wait behind empty claims. The look inside the transaction below decides; that transaction is
  // a claim's (WriterLock::claim), which claims on other replicas share.
  if (!ledger_.db.in_transaction()) {
    auto visible = next_candidate(now, agent);
    if (!visible) return std::unexpected(visible.error());
    if (!*visible) return ClaimStep{true, std::nullopt};
  }
  Transaction tx(ledger_.db, WriterLock::claim);
  TAKOSUMI_TRY(tx.begun());
  auto candidate = next_candidate(now, agent);
  if (!candidate) return std::unexpected(candidate.error());
  if (!*candidate) return ClaimStep{true, std::nullopt};
  return take_candidate(tx, **candidate, agent, build, LeaseTerms{ledger_.lease_seconds});
}

Result<RunClaims::ClaimStep> RunClaims::take_candidate(Transaction& tx, const Run& run,
                                                     const Agent& agent,
                                                     const ManifestFactory& build,
                                                     LeaseTerms terms) {
  const std::int64_t now = ledger_.clock.now_unix();
  // A running candidate is one whose lease expired (next_candidate), whatever follows (ended,
  // refused or handed out again).
  if (run.status == run_status::kRunning) ++lease_expiries_;
  auto end = run.status == run_status::kRunning ? expired_lease_end(run, now) : std::nullopt;
  if (end) {
    const bool cancelled = end->code == errc::kCancelled;
    TAKOSUMI_TRY(ledger_.fail_run(run, cancelled ? run_status::kCancelled : run_status::kFailed, *end,
                          kControlPlaneActor));
    // The stranded apply's agent may still bring the state it changed: its report stays
    // acceptable (complete() stores the state), so the attempt is not marked completed.
    if (run.stranded(now))
      TAKOSUMI_TRY(ledger_.db.run("UPDATE runs SET completed_attempt = 0 WHERE id = ?", run.id));
    TAKOSUMI_TRY(tx.commit());
    return ClaimStep{};
  }
  auto prior = ledger_.states.current(run.capsule_id);
  if (!prior) return std::unexpected(prior.error());
  if (auto broken = drift_pin_broken(run, *prior)) {
    TAKOSUMI_TRY(ledger_.fail_run(run, run_status::kFailed, *broken, kControlPlaneActor));
    TAKOSUMI_TRY(tx.commit());
    return ClaimStep{};
  }
  auto refused = refuse_for_connections(run, agent);
  if (!refused) return std::unexpected(refused.error());
  if (*refused) {
    TAKOSUMI_TRY(tx.commit());
    return ClaimStep{};
  }
  Error build_error;
  {
    // The lease is taken in a savepoint, so a manifest that cannot be built rolls back only the
    // lease, and the Run fails while this claim still holds its Capsule (a claim elsewhere
    // could otherwise lease it in between, and this failure would overwrite that lease).
    Transaction lease(ledger_.db, WriterLock::claim);
    TAKOSUMI_TRY(lease.begun());
    auto step = dispatch(run, agent, std::move(*prior), build, terms);
    if (!step) return std::unexpected(step.error());
    if (!step->unbuildable) {
      TAKOSUMI_TRY(lease.commit());
      TAKOSUMI_TRY(tx.commit());
      return step;
    }
    build_error = std::move(*step->unbuildable);
  }
  spdlog::warn("run {} cannot be dispatched: {}", run.id, build_error.to_string());
  const std::string& code = build_error.code;
  if (code == errc::kConnectionRevoked || code == errc::kConnectionExpired ||
      code == errc::kDependencyOutputMissing || code == errc::kOutputShareRevoked)
    TAKOSUMI_TRY(ledger_.audit.record(run_event(kControlPlaneActor, "run.refused", run,
                                         {{"code", build_error.code}, {"agentId", agent.id}})));
  TAKOSUMI_TRY(ledger_.fail_run(run, run_status::kFailed, build_error, kControlPlaneActor));
  TAKOSUMI_TRY(tx.commit());
  return ClaimStep{};
}

// Leases the Run to the agent and builds its manifest. A manifest that cannot be built comes back
// as `unbuildable` (the caller rolls the lease back and fails the Run); an error is the store's,
// and fails the claim only: the Run stays as it was, for a later claim.
Result<RunClaims::ClaimStep> RunClaims::dispatch(const Run& run, const Agent& agent,
                                               std::optional<StateVersion> prior,
                                               const ManifestFactory& build,
                                               LeaseTerms terms) {
  if (run.status == run_status::kRunning)
    TAKOSUMI_TRY(ledger_.audit.record(run_event(kControlPlaneActor, "run.lease_expired", run,
                                         {{"attempt", run.attempt},
                                          {"agentId", run.agent_id.value_or("")}})));
  const std::int64_t now = ledger_.clock.now_unix();
  const std::string token = crypto::new_token();
  const std::int64_t expires = now + terms.seconds;
  const bool announced = terms.apply_announced && run.type == protocol::RunType::apply;
  std::optional<std::string> prior_id;
  std::int64_t prior_generation = 0;
  if (prior) {
    prior_id = prior->id;
    prior_generation = prior->generation;
  }
  TAKOSUMI_TRY(ledger_.db.run(
      "UPDATE runs SET status = 'running', attempt = attempt + 1, agent_id = ?,"
      " lease_token_sha256 = ?, lease_expires_at = ?, started_at = COALESCE(started_at, ?),"
      " prior_state_version_id = ?, prior_generation = ?,"
      " apply_started_attempt = CASE WHEN ? = 1 THEN attempt + 1 ELSE apply_started_attempt END"
      " WHERE id = ?",
      agent.id, crypto::token_sha256(token), expires, now, prior_id, prior_generation,
      std::int64_t{announced ? 1 : 0}, run.id));
  auto updated = ledger_.runs.get_run(run.id);
  if (!updated) return std::unexpected(updated.error());
  ClaimedRun claimed{std::move(*updated), token, expires, std::move(prior)};
  auto manifest = build(claimed);
  if (!manifest) {
    if (manifest.error().code == errc::kUnavailable) return std::unexpected(manifest.error());
    ClaimStep step;
    step.unbuildable = std::move(manifest.error());
    return step;
  }
  TAKOSUMI_TRY(ledger_.audit.record(run_event(agent_actor(agent.id), "run.claimed", claimed.run,
                                       {{"agentId", agent.id}, {"attempt", claimed.run.attempt}})));
  if (announced)
    TAKOSUMI_TRY(ledger_.audit.record(run_event(agent_actor(agent.id), "run.apply_started", claimed.run,
                                         {{"agentId", agent.id},
                                          {"attempt", claimed.run.attempt}})));
  return ClaimStep{false, Job{std::move(claimed), std::move(*manifest)}};
}

Result<Job> RunClaims::claim_for_export(std::string_view run_id, const Agent& agent,
                                       std::int64_t lease_seconds, const ManifestFactory& build) {
  Transaction tx(ledger_.db);
  TAKOSUMI_TRY(tx.begun());
  auto run = ledger_.runs.get_run(run_id);
  if (!run) return std::unexpected(run.error());
  const std::int64_t now = ledger_.clock.now_unix();
  if (run->status == run_status::kRunning && run->lease_expires_at && *run->lease_expires_at > now)
    return fail(errc::kConflict,
                "run " + run->id + " is leased to agent " + run->agent_id.value_or("?") + " until " +
                    std::to_string(*run->lease_expires_at) + " (attempt " +
                    std::to_string(run->attempt) + "); import its result, or cancel the Run");
  if (run->status != run_status::kQueued && run->status != run_status::kRunning)
    return fail(errc::kConflict, "run " + run->id + " is " + run->status + ": only a queued Run is "
                                 "exported");
  if (run->apply_started() && !run->cancel_requested)
    return fail(errc::kConflict, "run " + run->id + " is an apply that was exported (attempt " +
                                     std::to_string(run->attempt) + ") and never reported; import "
                                     "its result, or cancel it");
  // The Run must be one this agent could claim (its pool, labels, a Capsule nobody holds) and the
  // oldest waiting Run of its Capsule, as claims take them.
  const std::string instr = ledger_.db.driver() == StoreDriver::sqlite ? "instr" : "takosumi_instr";
  auto eligible = first_run(ledger_.db.query(
      "SELECT " + std::string(kRunSelect) + " WHERE" + std::string(kWaitingForAgent) + " AND" +
          std::string(kCapsuleFree) + " AND c.agent_pool = ?2 AND" + std::string(kPoolUsable) +
          " AND NOT EXISTS (SELECT 1 FROM capsule_agent_labels l WHERE l.capsule_id = c.id"
          "   AND " + instr + "(?3, ',' || l.label || ',') = 0) AND r.id = ?4",
      now, agent.pool, agent_label_list(agent.labels), run->id));
  if (!eligible) return std::unexpected(eligible.error());
  if (!*eligible)
    return fail(errc::kConflict, "run " + run->id + " cannot go to agent " + agent.id +
                                     ": its Capsule is held by another Run, or the Capsule's pool "
                                     "or labels are not the agent's");
  auto older = ledger_.db.query("SELECT r.id FROM runs r WHERE r.capsule_id = ?2 AND r.rowid < (SELECT"
                         " rowid FROM runs WHERE id = ?3) AND" + std::string(kWaitingForAgent) +
                         " ORDER BY r.rowid LIMIT 1",
                         now, run->capsule_id, run->id);
  if (!older) return std::unexpected(older.error());
  auto older_row = older->step();
  if (!older_row) return std::unexpected(older_row.error());
  if (*older_row)
    return fail(errc::kConflict, "run " + older->text(0) + " of the same Capsule waits before run " +
                                     run->id + ": export (or cancel) that one first");
  // The site cannot announce its apply: the export is the announcement. The Run is never given
  // to another agent from here on (Run::stranded once the bundle expires), so an apply is never
  // run twice.
  auto step = take_candidate(tx, **eligible, agent, build, LeaseTerms{lease_seconds, true});
  if (!step) return std::unexpected(step.error());
  if (!step->job) {
    // The Run ended instead (a refused Connection, a broken pin, a manifest that cannot be built).
    auto ended = ledger_.runs.get_run(run->id);
    if (!ended) return std::unexpected(ended.error());
    return fail(ended->failure_code.value_or(std::string(errc::kConflict)),
                "run " + run->id + " ended instead of being exported: " +
                    ended->failure_message.value_or(ended->status));
  }
  return std::move(*step->job);  // take_candidate committed
}

Result<bool> RunClaims::refuse_for_connections(const Run& run, const Agent& agent) {
  auto capsule = ledger_.catalog.get_capsule(run.capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  auto refusal = ledger_.connections.first_unusable(*capsule);
  if (!refusal) return std::unexpected(refusal.error());
  if (!*refusal) return false;
  auto event = run_event(kControlPlaneActor, "run.refused", run,
                         {{"code", (*refusal)->error.code}, {"agentId", agent.id}});
  event.connection_id = (*refusal)->connection_id;
  TAKOSUMI_TRY(ledger_.audit.record(std::move(event)));
  TAKOSUMI_TRY(ledger_.fail_run(run, run_status::kFailed, (*refusal)->error, kControlPlaneActor));
  return true;
}

}  // namespace takosumi::controlplane
