#include "controlplane/runs/run_ledger.hpp"

#include <spdlog/spdlog.h>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {

Status RunLedger::fail_run(const Run& run, std::string_view status, const Error& why,
                           std::string_view actor) const {
  TAKOSUMI_TRY(db.run(
      "UPDATE runs SET status = ?, failure_code = ?, failure_message = ?, finished_at = ?,"
      " completed_attempt = attempt, lease_expires_at = NULL WHERE id = ?",
      status, why.code, without_nul(why.message), clock.now_unix(), run.id));
  return record_finished(run, actor, status, why.code);
}

// Status and failure code only: a failure message may quote tool output, so it stays on the Run.
Status RunLedger::record_finished(const Run& run, std::string_view actor, std::string_view status,
                                  const std::optional<std::string>& failure_code) const {
  boost::json::value code = nullptr;
  if (failure_code) code = *failure_code;
  return audit.record(run_event(actor, "run.finished", run,
                                 {{"status", std::string(status)}, {"failureCode", std::move(code)}}));
}

void RunLedger::record_fenced(std::string_view run_id, const Agent& agent,
                              std::optional<std::int64_t> attempt, std::string_view call) const {
  auto recorded = in_transaction(db, [&]() -> Status {
    auto run = runs.get_run(run_id);
    if (!run) return run.error().code == errc::kNotFound ? Status{} : std::unexpected(run.error());
    boost::json::value reported = nullptr;
    if (attempt) reported = *attempt;
    return audit.record(run_event(agent_actor(agent.id), "run.fenced", *run,
                                   {{"agentId", agent.id},
                                    {"attempt", std::move(reported)},
                                    {"currentAttempt", run->attempt},
                                    {"call", std::string(call)}}));
  });
  if (!recorded)
    spdlog::warn("run {}: recording the fenced {} of agent {} failed: {}", run_id, call, agent.id,
                 recorded.error().to_string());
}

}  // namespace takosumi::controlplane
