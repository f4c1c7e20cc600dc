// RunFlow, part: the end of an apply — the checkpointed tofu apply, the new state sealed, and the
// Outputs published from it. See run_flow.cpp for the steps in order.
#include <boost/json.hpp>

#include "common/error_codes.hpp"
#include "common/offload.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/phase_timer.hpp"
#include "runner/plan/published_outputs.hpp"
#include "runner/run_flow.hpp"
#include "runner/state/checkpointed_apply.hpp"
#include "runner/state/new_state.hpp"
#include "runner/state/run_artifacts.hpp"
#include "runner/state/state_checkpoint.hpp"

namespace takosumi::runner {

namespace asio = boost::asio;
namespace fs = std::filesystem;

asio::awaitable<Status> RunFlow::async_tofu_apply() {
  PhaseTimer timer(report_.phase_millis, "apply");
  const fs::path plan = workspace_->frozen_plan();
  StateCheckpointer checkpointer(*workspace_, module_dir_ / kStateFile, inputs_.outbox, manifest_,
                                 settings_.max_state_bytes);
  auto applied = co_await async_checkpointed_apply(tofu_->async_apply(plan), checkpointer, blocking_,
                                                   settings_.checkpoint_interval, manifest_.run_id);
  outcome_.checkpoints = checkpointer.count();
  co_return applied;
}

// The final state could not be sealed (torn by a kill, disk full): the newest state there is —
// another state file, or the last checkpoint — is kept instead, so what the apply created is not
// forgotten with the workspace.
asio::awaitable<void> RunFlow::async_keep_newest_state(const Error& why) {
  auto kept = co_await async_offload(blocking_.get_executor(), [this] {
    return recover_newest_state(settings_.work_root, inputs_.outbox, manifest_,
                                settings_.max_state_bytes);
  });
  if (!kept || !*kept) co_return;
  const auto& found = **kept;
  outcome_.state_envelope = found.sealed.artifact.path;
  report_.new_state = protocol::NewStateDescriptor{
      found.sealed.artifact.artifact_sha256, found.sealed.artifact.plaintext_sha256,
      found.sealed.identity.serial, found.sealed.identity.lineage,
      manifest_.prior_state ? manifest_.prior_state->generation : 0};
  notice("the final state could not be sealed (" + why.to_string() + "); the newest state (serial " +
         std::to_string(found.sealed.identity.serial) + ", from " + found.source + ") is kept instead");
}

// Read once, off the event loop: values the apply created (generated passwords, keys) are secrets
// from now on, and the Outputs come from here too.
asio::awaitable<Status> RunFlow::async_seal_new_state(NewState& state) {
  const auto file = new_state_file(module_dir_);
  if (!file) co_return Status{};  // tofu wrote none: nothing to seal, no encrypt phase
  PhaseTimer timer(report_.phase_millis, "encrypt");
  const Status sealed = co_await async_offload(blocking_.get_executor(), [&] {
    return seal_new_state(*workspace_, *file, inputs_.outbox, manifest_, settings_.max_state_bytes,
                          secrets_, state);
  });
  if (state.sealed) {
    outcome_.state_envelope = state.sealed->path;
    report_.new_state = protocol::NewStateDescriptor{
        state.sealed->artifact_sha256, state.sealed->plaintext_sha256, state.identity.serial,
        state.identity.lineage, manifest_.prior_state ? manifest_.prior_state->generation : 0};
  }
  co_return sealed;
}

// From the new state (no `tofu output`: it would read the module's files again, which the apply
// may have written, and cost a tofu start).
asio::awaitable<Status> RunFlow::async_publish_outputs(const boost::json::object& state_outputs) {
  PublishedOutputs published;
  const Status done = publish_outputs(state_outputs, manifest_.output_allowlist, secrets_, published);
  for (const auto& line : published.notices) notice(line);
  for (auto& refused : published.refused) report_.refused_outputs.push_back(std::move(refused));
  if (done) report_.outputs = std::move(published.outputs);
  co_return done;
}

}  // namespace takosumi::runner
