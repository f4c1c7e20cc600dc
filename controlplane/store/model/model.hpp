#pragma once
// The control plane's domain records as stored in SQLite. JSON-valued columns (change summaries,
// resource changes, env names, timings) stay serialized text here; the API layer parses them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/job_manifest.hpp"
#include "protocol/run_type.hpp"
#include "protocol/secret_bundle.hpp"

namespace takosumi::controlplane {

namespace run_status {
inline constexpr std::string_view kQueued = "queued";
inline constexpr std::string_view kRunning = "running";
inline constexpr std::string_view kSucceeded = "succeeded";
inline constexpr std::string_view kFailed = "failed";
inline constexpr std::string_view kCancelled = "cancelled";
}  // namespace run_status

using OutputAllowlist = std::map<std::string, protocol::OutputMapping>;

struct Workspace {
  std::string id;
  std::string name;
  std::int64_t created_at = 0;
};

struct CapsuleSource {
  std::string git_url;
  std::string ref;
  std::string module_path;
  // The Connection of kind git the repository is read with (an https token or an SSH key);
  // nullopt: a public repository.
  std::optional<std::string> connection_id;
};

// The pool every agent and Capsule belongs to unless told otherwise; it always exists.
inline constexpr std::string_view kDefaultPool = "default";

struct Capsule {
  std::string id;
  std::string workspace_id;
  std::string name;
  CapsuleSource source;
  OutputAllowlist output_allowlist;
  protocol::Variables variables;  // any JSON value per variable
  std::int64_t created_at = 0;
  // Set when the apply of a destroy_plan succeeded; cleared by the next apply that stores state.
  std::optional<std::int64_t> destroyed_at;
  std::vector<std::string> connection_ids;            // in assignment order
  std::vector<std::string> sensitive_variable_names;  // sorted; the values stay sealed at rest
  protocol::RunPolicy policy;  // handed to the agent in every manifest of the Capsule's Runs
  // Set on a Capsule restored from a backup: the names of what its source had and a backup never
  // holds (JSON {"connections": [...], "sensitiveVariableNames": [...], "sourceConnection": name}),
  // to be set again. Each key goes when what it names is set (PUT …/connections takes the first
  // two, PUT …/source-connection the last); NULL when none is left.
  std::optional<std::string> restore_pending;
  // Set on a restored Capsule whose backup recorded StateVersions: no Run until its state is
  // imported (a plan against empty state would recreate what exists) or an owner waives it.
  bool state_pending = false;
  // Which agents may take its Runs (docs/operations.md "Agent pools"): an agent of this pool whose
  // labels (its own and its pool's) include every one of these.
  std::string agent_pool = std::string(kDefaultPool);
  std::vector<std::string> agent_labels;  // sorted, unique
  // The OpenTofu versions its Runs may use, a constraint as a module's required_version states
  // one (protocol/version_constraint.hpp); handed to the agent in every manifest. nullopt: any.
  std::optional<std::string> opentofu_version;
  // Its spec revision: 1 when made, one more with each change of its name, source, variables or
  // outputAllowlist (PATCH /api/v1/capsules/{id}). A Run is made from one revision and runs it.
  std::int64_t spec_revision = 1;
};

// What one spec revision of a Capsule fixed, as kept in capsule_revisions: what a Run made from it
// runs (its source, variables and Output mapping), whatever the Capsule became since.
struct CapsuleRevision {
  std::string capsule_id;
  std::int64_t revision = 1;
  std::string name;
  CapsuleSource source;  // with the source's Connection of kind git as of then
  OutputAllowlist output_allowlist;
  protocol::Variables variables;
  std::int64_t created_at = 0;
};

namespace connection_status {
inline constexpr std::string_view kActive = "active";
inline constexpr std::string_view kRevoked = "revoked";
inline constexpr std::string_view kExpired = "expired";
}  // namespace connection_status

// A Connection as stored, without its values: those are sealed to the storage key and opened only
// to build a manifest (ConnectionStore::open).
namespace connection_kind {
// Credentials for a provider, injected into tofu's environment or files.
inline constexpr std::string_view kProvider = "provider";
// Credentials a Capsule's source is fetched with (protocol/git_credential.hpp), never tofu's.
inline constexpr std::string_view kGit = "git";
}  // namespace connection_kind

struct Connection {
  std::string id;
  std::string workspace_id;
  std::string name;
  std::string kind = std::string(connection_kind::kProvider);
  std::string provider;  // empty for kind git
  protocol::AuthMode auth_mode = protocol::AuthMode::env;
  std::vector<std::string> credential_names;  // sorted
  std::int64_t created_at = 0;
  std::optional<std::int64_t> expires_at;
  std::optional<std::int64_t> revoked_at;

  // revoked once revoked_at is set; otherwise expired from expires_at on; otherwise active.
  std::string_view status(std::int64_t now) const {
    if (revoked_at) return connection_status::kRevoked;
    if (expires_at && *expires_at <= now) return connection_status::kExpired;
    return connection_status::kActive;
  }
};

struct Run {
  std::string id;
  std::string capsule_id;
  std::string workspace_id;
  protocol::RunType type = protocol::RunType::plan;
  std::string status;
  std::int64_t attempt = 0;
  std::string source_commit;
  // The Capsule's spec revision the Run was made from (an apply: its plan's), and runs.
  std::int64_t spec_revision = 1;
  std::optional<std::string> planned_by;
  std::optional<std::string> plan_digest;
  std::optional<std::string> plan_artifact_sha256;
  // The plan view its report named (plan Runs; GET /api/v1/runs/{id}/plan).
  std::optional<std::string> plan_view_sha256;
  bool has_changes = false;
  std::optional<std::string> change_summary_json;
  // Empty unless loaded on purpose (RunStore::resource_changes): up to 16 MiB per plan.
  std::optional<std::string> resource_changes_json;
  std::optional<std::string> failure_code;
  std::optional<std::string> failure_message;
  std::optional<std::string> state_version_id;
  std::optional<std::string> tofu_version;
  std::optional<std::string> tofu_build;  // the agent's tofu.versionsDir entry the Run used
  std::optional<std::string> provider_lock_sha256;
  std::optional<std::string> env_names_json;
  std::optional<std::string> phase_millis_json;
  bool cancel_requested = false;
  std::optional<std::string> agent_id;
  std::optional<std::string> lease_token_sha256;
  std::optional<std::int64_t> lease_expires_at;
  // For drift_check Runs: the StateVersion the check is pinned to (set at creation, not at claim).
  std::optional<std::string> prior_state_version_id;
  std::optional<std::int64_t> prior_generation;
  std::int64_t completed_attempt = 0;
  // A rollback: the StateVersion this plan (and its apply) returns to.
  std::optional<std::string> restores_state_version_id;
  std::optional<std::string> data_loss_json;  // [{address,type,action,reason}]
  bool data_loss_accepted = false;            // apply Runs: the request accepted the plan's marks
  std::optional<std::string> drift_json;      // drift_check Runs: {status,resources}
  std::optional<std::string> refused_outputs_json;  // [{name,reason}] from the report
  std::int64_t created_at = 0;
  std::optional<std::int64_t> started_at;
  std::optional<std::int64_t> finished_at;
  // Apply Runs: the attempt whose agent announced it was starting `tofu apply` (the phase call).
  std::optional<std::int64_t> apply_started_attempt;
  // What the Run's last manifest took from its Capsule's Dependencies: [{dependencyId,
  // producerCapsuleId, stateVersionId, outputsSha256, variables}] (NULL when it had none).
  std::optional<std::string> dependency_inputs_json;

  bool finished() const {
    return status == run_status::kSucceeded || status == run_status::kFailed ||
           status == run_status::kCancelled;
  }
  // The current attempt may have changed real resources: its agent announced `tofu apply`.
  bool apply_started() const {
    return status == run_status::kRunning && apply_started_attempt == attempt;
  }
  // An apply that started and whose lease has expired at `now`. Its agent may hold the only state
  // of what it changed, so the Run is never handed to another agent and holds its Capsule until
  // that agent reports or someone cancels it (docs/protocol.md "Apply phase").
  bool stranded(std::int64_t now) const {
    return apply_started() && lease_expires_at && *lease_expires_at <= now;
  }
};

// A Capsule's use of public Outputs of another Capsule of its Workspace: each entry of `outputs`
// maps one of the consumer's variables to a public Output of the producer ({from, type,
// required}), handed to the consumer's plans and drift checks as that variable.
struct Dependency {
  std::string id;
  std::string workspace_id;
  std::string consumer_capsule_id;
  std::string producer_capsule_id;
  std::map<std::string, protocol::OutputMapping> outputs;  // consumer variable → producer Output
  std::int64_t created_at = 0;
  // Set when the producer is in another Workspace: the OutputShare the values pass through.
  std::optional<std::string> output_share_id;
};

// A Workspace role of a scoped API token, each including the ones before it: viewer reads,
// operator also plans, applies, cancels and checks drift, owner also changes everything in the
// Workspace (Capsules, Connections, Dependencies, its tokens, its OutputShares, backups).
enum class Role { viewer, operator_, owner };
std::string_view to_string(Role role);
std::optional<Role> role_from_string(std::string_view text);

// An API token scoped to Workspaces (the configured bootstrap token is the only admin). Only the
// SHA-256 of its secret is kept; the secret is shown once, when it is created.
struct ApiToken {
  std::string id;
  std::string name;
  std::map<std::string, Role> roles;  // Workspace id → role
  std::string created_by;              // the audit actor that created it
  std::int64_t created_at = 0;
  std::optional<std::int64_t> expires_at;
  std::optional<std::int64_t> revoked_at;
  std::optional<std::int64_t> last_used_at;
};

// A pool token made through the API (docs/operations.md "Pool tokens"): any number are valid at
// once, so a pool rotates by making a new one, moving its agents' configuration to it, and
// revoking the old one. Revoking stops new registrations with it; agents already registered keep
// their own credentials. Only the SHA-256 of the secret is kept.
struct PoolToken {
  std::string id;
  std::string name;
  std::string pool = std::string(kDefaultPool);  // the pool its agents join
  std::string created_by;
  std::int64_t created_at = 0;
  std::optional<std::int64_t> revoked_at;
};

// What an operator sees of a registered agent (GET /api/v1/agents).
struct AgentRecord {
  std::string id;
  std::string name;
  std::string version;
  std::vector<std::string> labels;
  std::int64_t capacity = 0;
  std::int64_t busy_slots = 0;
  std::int64_t created_at = 0;
  std::int64_t last_seen_at = 0;           // its last call: claim, heartbeat, registration
  std::string certificate_identity;        // mutual TLS: the client certificate it registered with
  std::string pool_token_id;               // "config" for a pool token from the configuration
  std::string pool = std::string(kDefaultPool);  // the pool of the token it last registered with
  std::optional<std::int64_t> revoked_at;
  bool keys_reset = false;                 // an operator's reset waits for the named key
  std::optional<std::int64_t> token_expires_at;
  std::optional<std::int64_t> deregistered_at;  // it left by itself (ephemeral)
};

// One Capsule of a workspace plan: the commit its ref named when the plan was asked for, the
// Capsules of the same workspace plan it waits for (its producers there), and its plan Run once
// created.
struct WorkspacePlanStep {
  std::string capsule_id;
  std::string source_commit;
  std::vector<std::string> producers;
  std::optional<std::string> plan_run_id;
};

// POST /api/v1/workspaces/{id}/plan: Capsules planned in graph order, a consumer only after each
// producer it waits for has applied (or planned no changes).
struct WorkspacePlan {
  std::string id;
  std::string workspace_id;
  std::string created_by;  // the audit actor; the Runs it creates later are created as it
  std::int64_t created_at = 0;
  std::vector<WorkspacePlanStep> steps;  // in graph order: producers before consumers
};

namespace share_status {
inline constexpr std::string_view kPending = "pending";
inline constexpr std::string_view kActive = "active";
inline constexpr std::string_view kRevoked = "revoked";
}  // namespace share_status

// Named public Outputs of one Capsule offered to another Workspace: pending until the receiving
// Workspace's owner approves it (active), revoked by either side for good. Capsules of the
// receiving Workspace use an active share as a Dependency (Dependency::output_share_id).
struct OutputShare {
  std::string id;
  std::string producer_capsule_id;
  std::string from_workspace_id;
  std::string to_workspace_id;
  std::vector<std::string> outputs;  // sorted public Output names
  std::string status;                // share_status
  std::string created_by;
  std::int64_t created_at = 0;
  std::optional<std::string> approved_by;
  std::optional<std::int64_t> approved_at;
  std::optional<std::string> revoked_by;
  std::optional<std::int64_t> revoked_at;
};

struct StateVersion {
  std::string id;
  std::string capsule_id;
  std::int64_t generation = 0;
  std::string created_by_run_id;
  std::string source_commit;
  std::int64_t serial = 0;
  std::string lineage;
  std::string plaintext_sha256;
  std::string ciphertext_sha256;
  std::int64_t created_at = 0;
  std::optional<std::string> restored_from;  // the StateVersion a rollback returned to
  // Kept from an apply that did not succeed (failed, cancelled, interrupted): whatever it created
  // is recorded, but the state is not what the plan meant to reach.
  bool partial = false;

  bool operator==(const StateVersion&) const = default;
};

struct Agent {
  std::string id;
  std::string name;
  std::string box_public_key;   // base64 X25519
  std::string sign_public_key;  // base64 Ed25519
  std::string pool = std::string(kDefaultPool);
  std::vector<std::string> labels;  // its own and its pool's: what a Capsule's agentLabels match
};

// An agent pool (docs/operations.md "Agent pools"): its agents are admitted by its pool tokens and
// all carry its labels; a Capsule naming it has its Runs taken only by them. Only the Workspaces
// it names may use it: hosts set apart for some are not every tenant's to run modules on.
struct AgentPool {
  std::string name;
  std::vector<std::string> labels;      // sorted, unique
  std::vector<std::string> workspaces;  // Workspace ids, sorted; {"*"}: every Workspace
  std::string created_by;
  std::int64_t created_at = 0;
  // An offline pool (docs/air-gapped.md): no pool token admits to it and no agent claims its Runs;
  // they leave as offline Run bundles for its agents, registered from their public keys.
  bool offline = false;
};

// An offline Run's result bundle that came back when the fencing no longer took it.
struct KeptResult {
  std::string run_id;
  std::string sha256;
  std::string agent_id;
  std::string code;
  std::int64_t created_at = 0;
};

struct LogChunk {
  std::int64_t attempt = 0;
  std::int64_t seq = 0;
  std::string text;
};

}  // namespace takosumi::controlplane
