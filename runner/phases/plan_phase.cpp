#include "runner/phases/plan_phase.hpp"

#include <boost/json/serialize.hpp>

#include "common/file_io.hpp"
#include "common/offload.hpp"
#include "crypto/sha256.hpp"
#include "runner/phases/phase_timer.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;

asio::awaitable<Result<SealedArtifact>> async_seal_plan(const PhaseContext& run,
                                                        const std::vector<SecretBytes>& values) {
  PhaseTimer timer(run.phase_millis, "encrypt");
  co_return co_await async_offload(run.blocking.get_executor(), [&] {
    return seal_plan(run.workspace.frozen_plan(), values, run.workspace.plan_contents(), run.outbox,
                     run.manifest);
  });
}

// A file of the outbox, uploaded with the sealed plan; its digest travels in the report.
asio::awaitable<Status> async_keep_plan_view(const PhaseContext& run, const protocol::PlanView& view,
                                             PlannedRun& planned) {
  const auto file = run.outbox / "plan_view.json";
  auto kept = co_await async_offload(run.blocking.get_executor(), [&]() -> Result<std::string> {
    const std::string body = boost::json::serialize(protocol::to_json(view));
    TAKOSUMI_TRY(write_file_atomic(file, body));
    return crypto::sha256_hex(body);
  });
  if (!kept) co_return std::unexpected(kept.error().with_context("plan view"));
  planned.view_file = file;
  planned.view_sha256 = std::move(*kept);
  co_return Status{};
}

}  // namespace

asio::awaitable<Result<PlannedRun>> async_plan_phase(const PhaseContext& run, PlanMode mode,
                                                     const std::vector<std::string>& data_loss_patterns) {
  auto changed = co_await async_tofu_plan(run, run.workspace.plan_file(), mode);
  if (!changed) co_return std::unexpected(changed.error());
  // From here on only the frozen copy is read: what is shown is what is sealed and applied.
  TAKOSUMI_CO_TRY(co_await async_freeze(run, run.workspace.plan_file(), run.workspace.frozen_plan()));
  Result<PlanReview> review;
  {
    PhaseTimer timer(run.phase_millis, "show");
    auto doc = co_await async_show(run, run.workspace.frozen_plan());
    if (!doc) co_return std::unexpected(doc.error());
    review = co_await async_offload(run.blocking.get_executor(), [&] {
      return review_plan(*doc, *changed, run.manifest.output_allowlist, data_loss_patterns, run.secrets);
    });
  }
  if (!review) co_return std::unexpected(review.error());
  PlannedRun planned;
  if (review->has_changes) {
    auto sealed = co_await async_seal_plan(run, review->sealed_values);
    if (!sealed) co_return std::unexpected(sealed.error());
    planned.sealed = std::move(*sealed);
  }
  review->sealed_values.clear();
  const std::string digest = planned.sealed ? planned.sealed->plaintext_sha256 : std::string();
  protocol::PlanView view = std::move(review->view);
  view.run_id = run.manifest.run_id;
  view.plan_digest = digest;
  view.summary = review->analysis.summary;
  TAKOSUMI_CO_TRY(co_await async_keep_plan_view(run, view, planned));
  // The sealed plan's own text, after everything tofu printed: the plan an apply of this Run runs.
  if (run.log)
    for (auto& line : sealed_plan_lines(view, review->has_changes, digest)) run.log(std::move(line));
  planned.review = std::move(*review);
  co_return planned;
}

}  // namespace takosumi::runner
