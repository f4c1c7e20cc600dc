// What claims and completion share: ending a Run and auditing that it ended.
#include "controlplane/runs/run_queue.hpp"

namespace takosumi::controlplane {

Status RunQueue::fail_run(const Run& run, std::string_view status, const Error& why,
                          std::string_view actor) {
  TAKOSUMI_TRY(db_.run(
      "UPDATE runs SET status = ?, failure_code = ?, failure_message = ?, finished_at = ?,"
      " completed_attempt = attempt, lease_expires_at = NULL WHERE id = ?",
      status, why.code, without_nul(why.message), clock_.now_unix(), run.id));
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

}  // namespace takosumi::controlplane
