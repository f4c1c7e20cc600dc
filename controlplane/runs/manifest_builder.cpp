#include "controlplane/runs/manifest_builder.hpp"

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"
#include "controlplane/store/secret_storage.hpp"
#include "crypto/sealed_box.hpp"
#include "protocol/failure_codes.hpp"

namespace takosumi::controlplane {

Result<std::string> ManifestBuilder::reseal(std::string_view sha256, std::string_view what,
                                            const crypto::BoxPublicKey& to) {
  if (!blobs_.contains(sha256))
    return fail(errc::kStateIntegrityFailed,
                std::string(what) + " blob " + std::string(sha256) + " is missing");
  auto path = blobs_.path_for(sha256);
  if (!path) return std::unexpected(path.error());
  return with_context(keys_.reseal_dek(*path, to), "re-seal DEK of " + std::string(what));
}

Status ManifestBuilder::add_saved_plan(const ClaimedRun& claimed, const crypto::BoxPublicKey& to,
                                       protocol::JobManifest& m) {
  const Run& run = claimed.run;
  if (!run.planned_by) return fail(errc::kInternal, "apply run " + run.id + " has no plan run");
  auto plan = runs_.get_run(*run.planned_by);
  if (!plan) return std::unexpected(plan.error());
  const std::int64_t current = claimed.prior_state ? claimed.prior_state->generation : 0;
  if (plan->prior_generation.value_or(0) != current)
    return fail(errc::kConflict, "plan run " + plan->id + " was made against generation " +
                                     std::to_string(plan->prior_generation.value_or(0)) +
                                     " but the capsule is now at generation " +
                                     std::to_string(current) + "; plan again");
  if (!plan->plan_artifact_sha256 || !plan->plan_digest)
    return fail(errc::kStateIntegrityFailed, "plan run " + plan->id + " has no saved plan");
  auto sealed = reseal(*plan->plan_artifact_sha256, "saved plan", to);
  if (!sealed) return std::unexpected(sealed.error());
  m.saved_plan = protocol::SavedPlanRef{*plan->plan_digest, std::move(*sealed)};
  return {};
}

Result<protocol::SecretBundle> ManifestBuilder::open_secrets(const Capsule& capsule) {
  auto refusal = connections_.first_unusable(capsule);
  if (!refusal) return std::unexpected(refusal.error());
  if (*refusal) return std::unexpected((*refusal)->error);
  auto connections = connections_.get_many(capsule.connection_ids);
  if (!connections) return std::unexpected(connections.error());
  protocol::SecretBundle bundle;
  for (const auto& c : *connections) {
    auto secret = connections_.open(c);
    if (!secret) return std::unexpected(secret.error());
    bundle.connections.push_back(std::move(*secret));
  }
  auto sealed_vars = catalog_.sealed_sensitive_variables(capsule.id);
  if (!sealed_vars) return std::unexpected(sealed_vars.error());
  if (*sealed_vars) {
    auto stored = open_from_storage(**sealed_vars, keys_);
    if (!stored) return std::unexpected(stored.error().with_context("sensitive variables"));
    bundle.sensitive_variables = std::move(stored->sensitive_variables);
  }
  return bundle;
}

Status ManifestBuilder::add_secrets(const Capsule& capsule, const crypto::BoxPublicKey& to,
                                    protocol::JobManifest& m) {
  if (capsule.connection_ids.empty() && capsule.sensitive_variable_names.empty()) return {};
  auto bundle = open_secrets(capsule);
  if (!bundle) return std::unexpected(bundle.error().with_context("secrets of capsule " + capsule.id));
  // Each part was valid alone; together they may still repeat a credential name or grow too big.
  if (auto ok = protocol::validate_secret_bundle(*bundle); !ok)
    return std::unexpected(ok.error().with_context("secrets of capsule " + capsule.id));
  const SecretBytes text = protocol::serialize_secret_bundle(*bundle);
  if (text.size() > protocol::kMaxSecretBundleBytes)
    return fail(errc::kInvalidArgument,
                "secrets of capsule " + capsule.id + ": its Connections and sensitive variables take " +
                    std::to_string(text.size()) + " bytes, more than the limit of 512 KiB");
  auto sealed = crypto::seal(text.span(), to);
  if (sealed.empty()) return fail(errc::kCryptoFailed, "sealing the secrets to the agent failed");
  m.sealed_secrets = base64_encode(sealed);
  return {};
}

Result<protocol::JobManifest> ManifestBuilder::build(const ClaimedRun& claimed,
                                                     const Agent& agent) {
  const Run& run = claimed.run;
  auto capsule = catalog_.get_capsule(run.capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  auto agent_key = crypto::BoxPublicKey::from_base64(agent.box_public_key);
  if (!agent_key) return std::unexpected(agent_key.error().with_context("agent box key"));

  protocol::JobManifest m;
  m.run_id = run.id;
  m.attempt = run.attempt;
  m.agent_id = agent.id;
  m.type = run.type;
  m.workspace_id = capsule->workspace_id;
  m.capsule_id = capsule->id;
  m.source = {capsule->source.git_url, run.source_commit, capsule->source.module_path};
  if (const auto& sv = claimed.prior_state) {
    auto sealed = reseal(sv->ciphertext_sha256, "prior state " + sv->id, *agent_key);
    if (!sealed) return std::unexpected(sealed.error());
    m.prior_state = protocol::PriorState{sv->id, sv->generation, sv->plaintext_sha256,
                                         sv->serial, sv->lineage, std::move(*sealed)};
  }
  if (run.type == protocol::RunType::apply) TAKOSUMI_TRY(add_saved_plan(claimed, *agent_key, m));
  m.variables = capsule->variables;
  TAKOSUMI_TRY(add_secrets(*capsule, *agent_key, m));
  m.output_allowlist = capsule->output_allowlist;
  m.policy = capsule->policy;
  m.control_public_key = keys_.storage_public_key().to_base64();
  m.control_key_id = keys_.key_id();
  m.issued_at = clock_.now_unix();
  m.expires_at = m.issued_at + ttl_seconds_;
  m.nonce = crypto::new_token();
  return m;
}

Result<protocol::SignedManifest> ManifestBuilder::build_signed(const ClaimedRun& claimed,
                                                             const Agent& agent) {
  auto m = build(claimed, agent);
  if (!m) return std::unexpected(m.error());
  return protocol::sign_manifest(*m, keys_.signing_key());
}

}  // namespace takosumi::controlplane
