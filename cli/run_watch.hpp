#pragma once
// Long work, shown as it happens: a Run is followed from queued through running (with the phase
// its log shows: init, plan, apply…) to its end, with the elapsed time on a terminal and, with
// follow, its log as the sequence-numbered chunks arrive. Then its outcome: the change summary
// with data-loss marks highlighted, and the exit code it means.
#include <boost/json/object.hpp>

#include <ostream>
#include <string>

#include "cli/api_client.hpp"
#include "cli/output.hpp"

namespace takosumi::cli {

std::expected<boost::json::object, ApiError> watch_run(const ApiClient& api,
                                                       const std::string& run_id,
                                                       const Output& out, bool follow);

// Prints the Run's outcome (text mode) and returns what it means: ok, changes (a plan or drift
// check with changes), run_failed or run_cancelled. A plan's changes are printed from its plan
// view (GET /api/v1/runs/{id}/plan) as tofu prints a plan, else listed by address.
Exit report_run(const ApiClient& api, const boost::json::object& run, const Output& out);

// The plan view of a plan Run (or of an apply's plan) as tofu prints a plan, or the control
// plane's answer when it has none (404 says why: a drift check, an agent without plan views).
std::expected<void, ApiError> print_plan_view(const ApiClient& api, const std::string& run_id,
                                              const Output& out);

// The Run's log once, from the chunk after `after` (attempt, seq); returns the last printed.
struct LogPosition {
  std::int64_t attempt = 0;
  std::int64_t seq = -1;
};
std::expected<LogPosition, ApiError> print_new_log(const ApiClient& api, const std::string& run_id,
                                                   LogPosition after, std::ostream& to);

}  // namespace takosumi::cli
