#pragma once
// A drift check's tofu phase: a refresh-only plan, read and dropped. Read-only: nothing is sealed
// (no plan, no state) and no Output is touched, whatever the plan says. A found drift is said in
// the Run's log as drift_review's lines (addresses and attribute names, values redacted).
#include <boost/asio/awaitable.hpp>

#include "common/error.hpp"
#include "protocol/run_report.hpp"
#include "runner/phases/phase_context.hpp"

namespace takosumi::runner {

boost::asio::awaitable<Result<protocol::DriftReport>> async_drift_phase(const PhaseContext& run);

}  // namespace takosumi::runner
