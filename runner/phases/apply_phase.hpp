#pragma once
// An apply Run's tofu phase: the approved plan applied with state checkpoints taken while it runs,
// the state it leaves sealed as the new StateVersion — even when the apply failed or was
// cancelled, for what it created must not be forgotten —, and the mapped Outputs published from
// that state. The frozen plan and, where it brought them, its sensitive values were restored
// before (runner/state/run_restore.hpp).
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "common/error.hpp"
#include "protocol/run_report.hpp"
#include "runner/phases/phase_context.hpp"
#include "runner/plan/published_outputs.hpp"
#include "runner/tofu/cancel_signal.hpp"

namespace takosumi::runner {

struct ApplyStart {
  // The sealed plan brought its sensitive values along; otherwise `tofu show` names them before
  // tofu prints a line of the apply.
  bool plan_secrets_restored = false;
  // Awaited right before `tofu apply` starts (RunInputs::before_apply); its error stops the Run
  // with nothing applied.
  std::function<boost::asio::awaitable<Status>()> before_apply;
  CancelSignal& cancel;
  std::chrono::milliseconds checkpoint_interval;
  std::filesystem::path work_root;  // where an interrupted attempt's newest state is looked for
};

struct SealedNewState {
  std::filesystem::path envelope;  // in the outbox: upload as "state"
  protocol::NewStateDescriptor descriptor;
};

// What an apply leaves, filled in as it goes: a failed apply may still have sealed a new state.
struct AppliedRun {
  std::optional<SealedNewState> state;
  std::int64_t checkpoints = 0;  // encrypted checkpoints taken while tofu applied
  PublishedOutputs published;    // the Outputs, and the names refused; only once the state is sealed
};

boost::asio::awaitable<Status> async_apply_phase(const PhaseContext& run, const ApplyStart& start,
                                                 AppliedRun& applied);

}  // namespace takosumi::runner
