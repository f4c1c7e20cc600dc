#pragma once
// The job manifest: everything one Run attempt may use, signed by the control plane's Ed25519
// key (see protocol/signed_manifest.hpp). The agent acts only on a manifest whose signature,
// expiry, agent id and nonce it has checked. Wire shape: docs/protocol.md "Job manifest".
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "protocol/run_policy.hpp"
#include "protocol/run_type.hpp"
#include "protocol/variables.hpp"

namespace takosumi::protocol {

struct SourceSpec {
  std::string url;
  std::string commit;       // 40-hex commit id, resolved by the control plane
  std::string module_path;  // relative, "" or "." for the repository root
  // An offline Run bundle (docs/air-gapped.md) carries the commit's objects as a Git pack file
  // of this sha256 (hex) instead of the agent fetching them, and the commit's tree id, which the
  // agent compares with the tree of the commit it checks out. Both empty for an online Run.
  std::string tree;
  std::string pack_sha256;
};

// The StateVersion the Run starts from; its DEK is sealed to the claiming agent's X25519 key.
struct PriorState {
  std::string state_version_id;
  std::int64_t generation = 0;
  std::string plaintext_sha256;
  std::int64_t serial = 0;
  std::string lineage;
  std::string sealed_dek;  // base64, crypto_box_seal to the agent
};

// The saved plan an apply must execute; digest is sha256 (hex) of the plaintext plan file.
struct SavedPlanRef {
  std::string digest;
  std::string sealed_dek;  // base64, crypto_box_seal to the agent
  // What made the plan, as its Run recorded it: OpenTofu applies a saved plan only with the
  // version that made it, so the apply runs the same build (empty: tofu.binary; empty version:
  // not recorded).
  std::string tofu_version;
  std::string tofu_build;
};

struct OutputMapping {
  std::string from;  // OpenTofu output name
  std::string type;  // "string" | "number" | "bool" | "any"
  bool required = false;
};

struct JobManifest {
  std::string run_id;
  std::int64_t attempt = 0;
  std::string agent_id;
  RunType type = RunType::plan;
  std::string workspace_id;
  std::string capsule_id;
  SourceSpec source;
  std::optional<PriorState> prior_state;
  std::optional<SavedPlanRef> saved_plan;
  Variables variables;
  std::map<std::string, OutputMapping> output_allowlist;  // public name → mapping
  // base64 crypto_box_seal to the agent of the Run's SecretBundle (protocol/secret_bundle.hpp);
  // empty when the Capsule has no Connections and no sensitive variables.
  std::string sealed_secrets;
  // The Capsule's policy; the agent combines it with its pool's (protocol/run_policy.hpp).
  RunPolicy policy;
  std::string control_public_key;  // base64 X25519; new state and plans are sealed to it
  std::string control_key_id;
  std::int64_t issued_at = 0;
  std::int64_t expires_at = 0;
  std::string nonce;
  // An offline Run bundle's lease, as sha256 hex of its token: the bundle's index carries the
  // token unsigned, and the agent takes it only when it hashes to this. Empty online (the claim's
  // answer carries the lease over an authenticated connection).
  std::string lease_sha256;
  // The Capsule's opentofuVersion: a version constraint (protocol/version_constraint.hpp) the
  // OpenTofu the agent runs must satisfy, together with the module's required_version. Empty:
  // only the module's.
  std::string opentofu_version;
};

// {name: {"from", "type", "required"}}: a manifest's outputAllowlist, a Capsule's, and the
// variables of a Dependency, written one way.
json::object to_json(const std::map<std::string, OutputMapping>& mappings);
json::object to_json(const JobManifest& m);
// Validates shapes and sizes; errors have code manifest_invalid.
Result<JobManifest> job_manifest_from_json(const json::object& o);

}  // namespace takosumi::protocol
