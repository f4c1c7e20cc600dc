// RunFlow, part: the end of an apply — the checkpointed tofu apply, the new state sealed, and the
// Outputs published from it. See run_flow.cpp for the steps in order.
#include <boost/json.hpp>

#include "common/error_codes.hpp"
#include "common/offload.hpp"
#include "protocol/failure_codes.hpp"
#include "redaction/credential_check.hpp"
#include "redaction/sensitive_values.hpp"
#include "runner/phase_timer.hpp"
#include "runner/plan/output_filter.hpp"
#include "runner/run_flow.hpp"
#include "runner/state/checkpointed_apply.hpp"
#include "runner/state/run_artifacts.hpp"
#include "runner/state/state_checkpoint.hpp"
#include "runner/state/state_document.hpp"
#include "runner/state/state_file.hpp"

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

asio::awaitable<Status> RunFlow::async_seal_new_state() {
  fs::path state = module_dir_ / kErroredStateFile;
  if (!fs::exists(fs::symlink_status(state))) state = module_dir_ / kStateFile;
  if (!fs::exists(fs::symlink_status(state))) co_return Status{};
  if (auto ok = workspace_->check_regular_file(state); !ok)
    co_return std::unexpected(protocol::as_run_failure(ok.error(), errc::kStateIntegrityFailed));
  std::error_code size_ec;
  const auto state_bytes = fs::file_size(state, size_ec);
  PhaseTimer timer(report_.phase_millis, "encrypt");
  // Read once: values the apply created (generated passwords, keys) are secrets from now on, and
  // the Outputs come from here too.
  auto identity = co_await async_offload(blocking_.get_executor(), [&]() -> Result<StateIdentity> {
    auto doc = read_state_document(state, "the new state",
                                     state_read_limit(settings_.max_state_bytes), secrets_);
    if (!doc) return std::unexpected(doc.error());
    new_state_outputs_ = state_outputs(*doc);
    return state_identity(*doc);
  });
  if (!identity) co_return std::unexpected(protocol::as_run_failure(identity.error(), errc::kStateIntegrityFailed));
  new_state_empty_ = identity->empty;
  const auto& prior = manifest_.prior_state;
  if (prior && prior->serial == identity->serial && prior->lineage == identity->lineage)
    co_return Status{};  // unchanged: no new StateVersion
  auto sealed = co_await async_offload(blocking_.get_executor(), [&] {
    return seal_state(state, inputs_.outbox, manifest_, *identity);
  });
  if (!sealed) co_return std::unexpected(sealed.error());
  outcome_.state_envelope = sealed->path;
  report_.new_state = protocol::NewStateDescriptor{
      sealed->artifact_sha256, sealed->plaintext_sha256, identity->serial, identity->lineage,
      prior ? prior->generation : 0};
  // Checked after sealing: the state is kept and uploaded (what the apply did must not be
  // forgotten); the Run still fails so the operator sees the limit.
  if (!size_ec && state_bytes > settings_.max_state_bytes)
    co_return fail(errc::kLimitExceeded,
                   "the new state is " + std::to_string(state_bytes) + " bytes, more than "
                   "limits.maxStateBytes (" + std::to_string(settings_.max_state_bytes) +
                   "); it was stored, but raise the limit or split the Capsule");
  co_return Status{};
}

// From the new state (no `tofu output`: it would read the module's files again, which the apply
// may have written, and cost a tofu start).
asio::awaitable<Status> RunFlow::async_publish_outputs() {
  redaction::collect_output_secrets(new_state_outputs_, secrets_);
  auto filtered = filter_outputs(boost::json::serialize(new_state_outputs_), manifest_.output_allowlist);
  if (!filtered) co_return std::unexpected(filtered.error());
  for (const auto& warning : filtered->warnings) notice("warning: " + warning);
  for (const auto& name : filtered->sensitive)
    report_.refused_outputs.push_back(
        protocol::RefusedOutput{name, std::string(protocol::kSensitiveOutputReason)});
  report_.outputs = std::move(filtered->outputs);
  TAKOSUMI_CO_TRY(refuse_credential_outputs());
  if (const auto bytes = boost::json::serialize(report_.outputs).size();
      bytes > protocol::kMaxPublishedOutputsBytes)
    co_return fail(errc::kLimitExceeded,
                   "the mapped Outputs are " + std::to_string(bytes) + " bytes together, more than " +
                       std::to_string(protocol::kMaxPublishedOutputsBytes) +
                       " a control plane publishes; map smaller values");
  co_return Status{};
}

// The allowlist and `sensitive` are the module author's promises; a value that still looks like
// a credential (or contains a secret this Run holds) is not published, whatever was promised.
Status RunFlow::refuse_credential_outputs() {
  std::vector<std::string> required;
  for (auto it = report_.outputs.begin(); it != report_.outputs.end();) {
    const std::string name(it->key());
    auto reason = redaction::credential_reason(it->value(), secrets_);
    if (!reason) {
      ++it;
      continue;
    }
    notice("output " + name + " not published: its value looks like a credential (" + *reason + ")");
    report_.refused_outputs.push_back(protocol::RefusedOutput{name, *reason});
    if (auto m = manifest_.output_allowlist.find(name);
        m != manifest_.output_allowlist.end() && m->second.required)
      required.push_back(name);
    it = report_.outputs.erase(it);
  }
  if (required.empty()) return {};
  std::string names;
  for (const auto& n : required) names += (names.empty() ? "" : ", ") + n;
  return fail(errc::kOutputRefused, "required output " + names +
                                        " looks like a credential and is not published; map a "
                                        "non-secret value or mark the output sensitive");
}

}  // namespace takosumi::runner
