#include "controlplane/runs/manifest_builder.hpp"

#include "crypto/sha256.hpp"

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "controlplane/runs/published_outputs.hpp"
#include "controlplane/store/keys/secret_storage.hpp"
#include "crypto/random_ids.hpp"
#include "crypto/sealed_box.hpp"
#include "common/failure_codes.hpp"
#include "protocol/output_type.hpp"
#include "protocol/variables.hpp"

namespace takosumi::controlplane {

Result<std::string> ManifestBuilder::reseal(std::string_view sha256, std::string_view what,
                                            const crypto::BoxPublicKey& to) {
  auto stored = stores_.blobs.contains(sha256);
  if (!stored) return std::unexpected(stored.error());
  if (!*stored)
    return fail(errc::kStateIntegrityFailed,
                std::string(what) + " blob " + std::string(sha256) + " is missing");
  auto path = stores_.blobs.path_for(sha256);
  if (!path) return std::unexpected(path.error());
  return with_context(stores_.keys.reseal_dek(*path, to), "re-seal DEK of " + std::string(what));
}

Status ManifestBuilder::add_saved_plan(const ClaimedRun& claimed, const crypto::BoxPublicKey& to,
                                       protocol::JobManifest& m) {
  const Run& run = claimed.run;
  if (!run.planned_by) return fail(errc::kInternal, "apply run " + run.id + " has no plan run");
  auto plan = stores_.runs.get_run(*run.planned_by);
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
  m.saved_plan = protocol::SavedPlanRef{*plan->plan_digest, std::move(*sealed),
                                        plan->tofu_version.value_or(""),
                                        plan->tofu_build.value_or("")};
  return {};
}

Result<protocol::SecretBundle> ManifestBuilder::open_secrets(const Capsule& capsule) {
  auto refusal = stores_.connections.first_unusable(capsule);
  if (!refusal) return std::unexpected(refusal.error());
  if (*refusal) return std::unexpected((*refusal)->error);
  auto connections = stores_.connections.get_many(capsule.connection_ids);
  if (!connections) return std::unexpected(connections.error());
  protocol::SecretBundle bundle;
  for (const auto& c : *connections) {
    auto secret = stores_.connections.open(c);
    if (!secret) return std::unexpected(secret.error());
    bundle.connections.push_back(std::move(*secret));
  }
  if (capsule.source.connection_id) {
    auto source = stores_.connections.get(*capsule.source.connection_id);
    if (!source) return std::unexpected(source.error());
    auto credential = stores_.connections.open_git(*source);
    if (!credential) return std::unexpected(credential.error());
    bundle.source = std::move(*credential);
  }
  auto sealed_vars = stores_.catalog.sealed_sensitive_variables(capsule.id);
  if (!sealed_vars) return std::unexpected(sealed_vars.error());
  if (*sealed_vars) {
    auto stored = open_from_storage(**sealed_vars, stores_.keys);
    if (!stored) return std::unexpected(stored.error().with_context("sensitive variables"));
    bundle.sensitive_variables = std::move(stored->sensitive_variables);
  }
  return bundle;
}

Status ManifestBuilder::add_secrets(const Capsule& capsule, const crypto::BoxPublicKey& to,
                                    protocol::JobManifest& m) {
  if (capsule.connection_ids.empty() && capsule.sensitive_variable_names.empty() &&
      !capsule.source.connection_id)
    return {};
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

Status ManifestBuilder::add_dependency_inputs(const Run& run, protocol::JobManifest& m) {
  namespace json = boost::json;
  auto dependencies = stores_.dependencies.as_consumer(run.capsule_id);
  if (!dependencies) return std::unexpected(dependencies.error());
  if (dependencies->empty()) return stores_.runs.set_dependency_inputs(run.id, std::nullopt);
  json::array inputs;
  for (const Dependency& d : *dependencies) {
    auto producer = stores_.catalog.get_capsule(d.producer_capsule_id);
    if (!producer) return std::unexpected(producer.error());
    // Only what the producer publishes (its mapped Outputs; a sensitive one never is), never its
    // state: the same values GET /api/v1/capsules/{id}/outputs shows.
    auto all = published_outputs(*producer, stores_.states);
    if (!all) return std::unexpected(all.error());
    const PublishedOutputs seen = seen_through(d, std::move(*all));
    const PublishedOutputs* published = &seen;
    // Another Workspace's Capsule is named by id only.
    const std::string who = d.output_share_id ? "capsule " + producer->id
                                              : "capsule " + producer->name + " (" + producer->id + ")";
    // Across Workspaces the values pass only while the share is active.
    std::optional<std::string> share_refusal;
    if (d.output_share_id) {
      auto share = stores_.shares.get(*d.output_share_id);
      if (!share) return std::unexpected(share.error());
      if (share->status != share_status::kActive)
        share_refusal = "output share " + share->id + " is " + share->status;
    }
    json::array variables;
    for (const auto& [variable, mapping] : d.outputs) {
      if (share_refusal && !mapping.required) continue;
      if (share_refusal)
        return fail(errc::kOutputShareRevoked,
                    *share_refusal + ", and variable " + variable + " (dependency " + d.id +
                        ") needs its Output \"" + mapping.from +
                        "\"; the giving Workspace's owner shares it again, or delete the "
                        "Dependency");
      const json::value* value = published->values.if_contains(mapping.from);
      std::optional<std::string> missing;
      if (value == nullptr) {
        missing = "has not published Output \"" + mapping.from + "\"";
      } else {
        auto fits = protocol::output_type_matches(*value, mapping.type);
        if (!fits) return std::unexpected(fits.error());
        if (!*fits)
          missing = "published Output \"" + mapping.from + "\" as " +
                    protocol::output_kind(*value) + ", not " + mapping.type;
      }
      if (missing && !mapping.required) continue;
      if (missing)
        return fail(errc::kDependencyOutputMissing,
                    who + " " + *missing +
                        ", which variable " + variable + " needs (dependency " + d.id +
                        "); plan and apply that capsule first");
      if (const std::size_t size = takosumi::serialize(*value).size();
          size > protocol::kMaxVariableBytes)
        return fail(errc::kLimitExceeded,
                    "Output \"" + mapping.from + "\" of capsule " + producer->id + " takes " +
                        std::to_string(size) + " bytes; variable " + variable + " (dependency " +
                        d.id + ") takes at most " + std::to_string(protocol::kMaxVariableBytes));
      m.variables[variable] = *value;
      variables.emplace_back(variable);
    }
    json::object input{
        {"dependencyId", d.id},
        {"producerCapsuleId", d.producer_capsule_id},
        {"stateVersionId", published->state_version_id
                               ? json::value(*published->state_version_id)
                               : json::value(nullptr)},
        {"outputsSha256", published->sha256},
        {"variables", std::move(variables)}};
    if (d.output_share_id) input["outputShareId"] = *d.output_share_id;
    inputs.emplace_back(std::move(input));
  }
  if (m.variables.size() > protocol::kMaxVariables)
    return fail(errc::kLimitExceeded,
                "capsule " + run.capsule_id + " has " + std::to_string(m.variables.size()) +
                    " variables with its Dependencies' inputs; a Run takes at most " +
                    std::to_string(protocol::kMaxVariables));
  return stores_.runs.set_dependency_inputs(run.id, takosumi::serialize(inputs));
}

Result<protocol::JobManifest> ManifestBuilder::build(const ClaimedRun& claimed,
                                                     const Agent& agent,
                                                     const OfflineSource* offline) {
  const Run& run = claimed.run;
  auto capsule = stores_.catalog.get_capsule(run.capsule_id);
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
  // The spec revision the Run was made from (an apply: its plan's), not what the Capsule is now.
  auto revision = stores_.catalog.get_revision(run.capsule_id, run.spec_revision);
  if (!revision) return std::unexpected(revision.error());
  const Capsule as_run = capsule_as_of(*capsule, *revision);
  m.source = {as_run.source.git_url, run.source_commit, as_run.source.module_path};
  if (const auto& sv = claimed.prior_state) {
    auto sealed = reseal(sv->ciphertext_sha256, "prior state " + sv->id, *agent_key);
    if (!sealed) return std::unexpected(sealed.error());
    m.prior_state = protocol::PriorState{sv->id, sv->generation, sv->plaintext_sha256,
                                         sv->serial, sv->lineage, std::move(*sealed)};
  }
  if (run.type == protocol::RunType::apply) TAKOSUMI_TRY(add_saved_plan(claimed, *agent_key, m));
  m.variables = as_run.variables;
  // An apply takes its variables from its saved plan; every other Run evaluates the module.
  if (run.type != protocol::RunType::apply) TAKOSUMI_TRY(add_dependency_inputs(run, m));
  if (const std::size_t size = takosumi::serialize(protocol::to_json(m.variables)).size();
      size > protocol::kMaxRunVariablesBytes)
    return fail(errc::kLimitExceeded,
                "the variables of run " + run.id + " take " + std::to_string(size) +
                    " bytes serialized; a Run takes at most " +
                    std::to_string(protocol::kMaxRunVariablesBytes) +
                    " (its Capsule's variables and its Dependencies' inputs together)");
  TAKOSUMI_TRY(add_secrets(as_run, *agent_key, m));
  m.output_allowlist = as_run.output_allowlist;
  m.policy = capsule->policy;
  m.opentofu_version = capsule->opentofu_version.value_or("");
  m.control_public_key = stores_.keys.storage_public_key().to_base64();
  m.control_key_id = stores_.keys.key_id();
  m.issued_at = clock_.now_unix();
  m.expires_at = m.issued_at + ttl_seconds_;
  if (offline) {
    m.lease_sha256 = crypto::sha256_hex(claimed.lease_token);
    m.source.tree = offline->tree;
    m.source.pack_sha256 = offline->pack_sha256;
    m.expires_at = offline->expires_at;
  }
  m.nonce = crypto::new_token();
  return m;
}

Result<protocol::SignedManifest> ManifestBuilder::build_signed(const ClaimedRun& claimed,
                                                             const Agent& agent,
                                                             const OfflineSource* offline) {
  auto m = build(claimed, agent, offline);
  if (!m) return std::unexpected(m.error());
  return protocol::sign_manifest(*m, stores_.keys.signing_key());
}

}  // namespace takosumi::controlplane
