#include "runner/phases/apply_phase.hpp"

#include "common/error_codes.hpp"
#include "common/offload.hpp"
#include "runner/phases/phase_timer.hpp"
#include "runner/state/checkpointed_apply.hpp"
#include "runner/state/new_state.hpp"
#include "runner/state/run_artifacts.hpp"
#include "runner/state/state_checkpoint.hpp"
#include "runner/state/state_file.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;

std::int64_t prior_generation(const protocol::JobManifest& manifest) {
  return manifest.prior_state ? manifest.prior_state->generation : 0;
}

asio::awaitable<Status> async_tofu_apply(const PhaseContext& run, const ApplyStart& start,
                                         AppliedRun& applied) {
  PhaseTimer timer(run.phase_millis, "apply");
  StateCheckpointer checkpointer(run.workspace, run.module_dir / kStateFile, run.outbox, run.manifest,
                                 run.max_state_bytes);
  auto done = co_await async_checkpointed_apply(run.tofu.async_apply(run.workspace.frozen_plan()),
                                                checkpointer, run.blocking, start.checkpoint_interval,
                                                run.manifest.run_id);
  applied.checkpoints = checkpointer.count();
  co_return done;
}

// Read once, off the event loop: values the apply created (generated passwords, keys) are secrets
// from now on, and the Outputs come from here too.
asio::awaitable<Status> async_seal_new_state(const PhaseContext& run, NewState& state, AppliedRun& applied) {
  const auto file = new_state_file(run.module_dir);
  if (!file) co_return Status{};  // tofu wrote none: nothing to seal, no encrypt phase
  PhaseTimer timer(run.phase_millis, "encrypt");
  const Status sealed = co_await async_offload(run.blocking.get_executor(), [&] {
    return seal_new_state(run.workspace, *file, run.outbox, run.manifest, run.max_state_bytes, run.secrets,
                          state);
  });
  if (state.sealed)
    applied.state = SealedNewState{
        state.sealed->path,
        {state.sealed->artifact_sha256, state.sealed->plaintext_sha256, state.identity.serial,
         state.identity.lineage, prior_generation(run.manifest)}};
  co_return sealed;
}

// The final state could not be sealed (torn by a kill, disk full): the newest state there is —
// another state file, or the last checkpoint — is kept instead, so what the apply created is not
// forgotten with the workspace.
asio::awaitable<void> async_keep_newest_state(const PhaseContext& run, const ApplyStart& start,
                                              const Error& why, AppliedRun& applied) {
  auto kept = co_await async_offload(run.blocking.get_executor(), [&] {
    return recover_newest_state(start.work_root, run.outbox, run.manifest, run.max_state_bytes);
  });
  if (!kept || !*kept) co_return;
  const auto& found = **kept;
  applied.state = SealedNewState{
      found.sealed.artifact.path,
      {found.sealed.artifact.artifact_sha256, found.sealed.artifact.plaintext_sha256,
       found.sealed.identity.serial, found.sealed.identity.lineage, prior_generation(run.manifest)}};
  phase_notice(run, "the final state could not be sealed (" + why.to_string() + "); the newest state (serial " +
                        std::to_string(found.sealed.identity.serial) + ", from " + found.source +
                        ") is kept instead");
}

}  // namespace

asio::awaitable<Status> async_apply_phase(const PhaseContext& run, const ApplyStart& start, AppliedRun& applied) {
  if (!start.plan_secrets_restored) {
    // The plan names the sensitive values this apply will handle (attributes, outputs, variable
    // values): they must be known before tofu prints a line. A plan sealed by an agent before
    // plan contents did not bring them along: ask tofu.
    PhaseTimer timer(run.phase_millis, "show");
    TAKOSUMI_CO_TRY(co_await async_show(run, run.workspace.frozen_plan()));
  }
  if (start.before_apply) TAKOSUMI_CO_TRY(co_await start.before_apply());
  if (start.cancel.requested()) co_return fail(errc::kCancelled, "cancelled before the apply started");
  const Status done = co_await async_tofu_apply(run, start, applied);
  // Whatever the apply did to the state is kept, even when it failed or was cancelled.
  NewState state;
  const Status sealed = co_await async_seal_new_state(run, state, applied);
  if (!sealed && !applied.state) co_await async_keep_newest_state(run, start, sealed.error(), applied);
  if (!done) {
    if (!sealed)
      co_return std::unexpected(done.error().with_context("and the state could not be sealed (" +
                                                          sealed.error().to_string() + ")"));
    co_return done;
  }
  if (!sealed) co_return sealed;
  if (state.found && state.identity.empty) {
    // A destroyed Capsule has no Outputs, so a required mapping cannot hold; none are published.
    phase_notice(run, "the new state is empty: no Outputs are published");
    co_return Status{};
  }
  // From the new state (no `tofu output`: it would read the module's files again, which the apply
  // may have written, and cost a tofu start).
  const Status published =
      publish_outputs(state.outputs, run.manifest.output_allowlist, run.secrets, applied.published);
  for (const auto& line : applied.published.notices) phase_notice(run, line);
  co_return published;
}

}  // namespace takosumi::runner
