#include "runner/phases/drift_phase.hpp"

#include "common/offload.hpp"
#include "runner/phases/phase_timer.hpp"
#include "runner/plan/plan_review.hpp"

namespace takosumi::runner {

namespace asio = boost::asio;

asio::awaitable<Result<protocol::DriftReport>> async_drift_phase(const PhaseContext& run) {
  auto planned = co_await async_tofu_plan(run, run.workspace.drift_plan_file(), PlanMode::refresh_only);
  if (!planned) co_return std::unexpected(planned.error());
  // -detailed-exitcode 0: the refresh changed nothing in the state and no Output differs, so no
  // object drifted; there is nothing for `tofu show` to tell.
  if (!*planned) co_return protocol::DriftReport{"no_drift", {}};
  const auto frozen = run.workspace.agent_dir() / "drift.tfplan";
  TAKOSUMI_CO_TRY(co_await async_freeze(run, run.workspace.drift_plan_file(), frozen));
  Result<DriftReview> drift;
  {
    PhaseTimer timer(run.phase_millis, "show");
    auto doc = co_await async_show(run, frozen);
    if (!doc) co_return std::unexpected(doc.error());
    drift = co_await async_offload(run.blocking.get_executor(), [&] { return review_drift(*doc, run.secrets); });
  }
  if (!drift) co_return std::unexpected(drift.error());
  if (run.log)
    for (auto& line : drift->log_lines) run.log(std::move(line));
  co_return std::move(drift->report);
}

}  // namespace takosumi::runner
