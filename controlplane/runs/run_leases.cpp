// The calls an agent makes while it holds a lease: checks, heartbeat, the apply phase, release,
// and the audit of a refused (fenced) call. Every check goes through lease.hpp.
#include <spdlog/spdlog.h>

#include "common/error_codes.hpp"
#include "controlplane/runs/lease.hpp"
#include "controlplane/runs/run_leases.hpp"
#include "controlplane/store/agent_registry.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {

namespace {

// The Run, when `accepts` (lease.hpp) takes the presented lease; lease_lost otherwise.
Result<Run> run_with_lease(RunStore& runs, std::string_view run_id, const PresentedLease& lease,
                           bool (*accepts)(const Run&, const PresentedLease&)) {
  auto run = runs.get_run(run_id);
  if (!run) return run;
  if (!accepts(*run, lease)) return lease_lost(run_id);
  return run;
}

}  // namespace

Result<Run> RunLeases::check_lease(std::string_view run_id, const Agent& agent,
                                  std::string_view lease_token) {
  return run_with_lease(ledger_.runs, run_id, {agent.id, lease_token}, holds_lease);
}

Result<Run> RunLeases::check_upload_lease(std::string_view run_id, const Agent& agent,
                                         std::string_view lease_token) {
  auto run = ledger_.runs.get_run(run_id);
  if (!run) return run;
  const PresentedLease lease{agent.id, lease_token};
  // completed_attempt: once the late report is stored, the state it brought is final.
  const bool late = cancelled_while_stranded(*run) && run->completed_attempt == 0;
  if (!holds_lease(*run, lease) && !(late && is_lease_of(*run, lease))) return lease_lost(run_id);
  return run;
}

Result<Run> RunLeases::check_report_lease(std::string_view run_id, const Agent& agent,
                                         std::string_view lease_token) {
  return run_with_lease(ledger_.runs, run_id, {agent.id, lease_token}, is_lease_of);
}

Result<LeaseRenewal> RunLeases::start_apply(std::string_view run_id, const Agent& agent,
                                           std::string_view lease_token, std::int64_t attempt) {
  auto started = start_apply_in_transaction(run_id, agent, lease_token, attempt);
  if (!started && started.error().code == errc::kLeaseLost)
    ledger_.record_fenced(run_id, agent, attempt, "phase");
  return started;
}

// The lease must be live: once it expired the Run may be claimed by another agent at any moment,
// and an apply started now could race that agent's. A repeat for an attempt already announced is
// accepted even after expiry: that Run is stranded, so nobody else can have claimed it.
Result<LeaseRenewal> RunLeases::start_apply_in_transaction(std::string_view run_id,
                                                          const Agent& agent,
                                                          std::string_view lease_token,
                                                          std::int64_t attempt) {
  Transaction tx(ledger_.db);
  TAKOSUMI_TRY(tx.begun());
  auto run = ledger_.runs.get_run(run_id);
  if (!run) return std::unexpected(run.error());
  const std::int64_t now = ledger_.clock.now_unix();
  const bool repeat = run->apply_started();
  if (!holds_lease(*run, {agent.id, lease_token, attempt}) || !(lease_live(*run, now) || repeat))
    return lease_lost(run_id);
  if (run->type != protocol::RunType::apply)
    return fail(errc::kInvalidArgument, "run " + run->id + " is a " +
                                            std::string(protocol::to_string(run->type)) +
                                            " run: only an apply announces the apply phase");
  const std::int64_t expires = now + ledger_.lease_seconds;
  TAKOSUMI_TRY(ledger_.db.run(
      "UPDATE runs SET apply_started_attempt = ?, lease_expires_at = ? WHERE id = ?", attempt,
      expires, run->id));
  if (!repeat)
    TAKOSUMI_TRY(ledger_.audit.record(run_event(agent_actor(agent.id), "run.apply_started", *run,
                                         {{"agentId", agent.id}, {"attempt", attempt}})));
  TAKOSUMI_TRY(tx.commit());
  return LeaseRenewal{expires, run->cancel_requested};
}

// The check and the renewal in one writer's transaction: on replicas, the lease could otherwise
// be claimed by another agent between the two, and this renewal would extend that agent's lease.
Result<LeaseRenewal> RunLeases::heartbeat(std::string_view run_id, const Agent& agent,
                                         std::string_view lease_token) {
  return in_transaction(ledger_.db, [&]() -> Result<LeaseRenewal> {
    auto run = check_lease(run_id, agent, lease_token);
    if (!run) return std::unexpected(run.error());
    const std::int64_t expires = ledger_.clock.now_unix() + ledger_.lease_seconds;
    TAKOSUMI_TRY(ledger_.db.run("UPDATE runs SET lease_expires_at = ? WHERE id = ?", expires, run->id));
    return LeaseRenewal{expires, run->cancel_requested};
  });
}

Status RunLeases::release(std::string_view run_id, const Agent& agent, std::string_view lease_token,
                         bool exported) {
  return in_transaction(ledger_.db, [&]() -> Status {
    auto run = check_lease(run_id, agent, lease_token);
    if (!run) return std::unexpected(run.error());
    // check_lease found it running; an announced apply may have changed real resources already,
    // unless the announcement was the export of a bundle that never left.
    if ((run->apply_started() && !exported) || run->completed_attempt == run->attempt)
      return lease_lost(run_id);
    TAKOSUMI_TRY(ledger_.db.run(
        "UPDATE runs SET status = 'queued', attempt = attempt - 1, agent_id = NULL,"
        " lease_token_sha256 = NULL, lease_expires_at = NULL,"
        " apply_started_attempt = CASE WHEN ? = 1 THEN NULL ELSE apply_started_attempt END,"
        " started_at = CASE WHEN attempt = 1 THEN NULL ELSE started_at END WHERE id = ?",
        std::int64_t{exported ? 1 : 0}, run->id));
    return ledger_.audit.record(run_event(kControlPlaneActor, "run.released", *run,
                                   {{"agentId", agent.id}, {"attempt", run->attempt}}));
  });
}

Status RunLeases::end_exported(std::string_view run_id, std::string_view actor) {
  return in_transaction(ledger_.db, [&]() -> Status {
    auto run = ledger_.runs.get_run(run_id);
    if (!run) return std::unexpected(run.error());
    if (run->status != run_status::kRunning || !run->agent_id) return {};
    auto offline = ledger_.db.single_integer("SELECT count(*) FROM agents WHERE id = ? AND pool_token_id = ?",
                                      *run->agent_id, kOfflinePoolTokenId);
    if (!offline) return std::unexpected(offline.error());
    if (*offline == 0) return {};
    const bool apply = run->apply_started();
    const Error why{std::string(errc::kCancelled),
                    "cancelled while exported to offline agent " + *run->agent_id +
                        (apply ? ": the site may still apply it; its result, if it comes back, is "
                                 "kept (run-bundle import)"
                               : ": a result brought back later is refused")};
    TAKOSUMI_TRY(ledger_.fail_run(*run, run_status::kCancelled, why, actor));
    if (apply) TAKOSUMI_TRY(ledger_.db.run("UPDATE runs SET completed_attempt = 0 WHERE id = ?", run->id));
    return {};
  });
}

}  // namespace takosumi::controlplane
