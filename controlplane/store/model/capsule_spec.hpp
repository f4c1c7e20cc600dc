#pragma once
// Validation of what users send to create Workspaces and Capsules. Pure functions; every error is
// invalid_argument with a message naming the offending field ("outputAllowlist.url.type: …").
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "common/json_fields.hpp"
#include "protocol/run_policy.hpp"

namespace takosumi::controlplane {

namespace json = boost::json;

// ^[a-z0-9][a-z0-9_-]{0,62}$ — Workspace and Capsule names.
bool is_valid_name(std::string_view name);
// An id as this control plane makes them ("<prefix>_<hex>", ≤ 128): what a restored backup or a
// pool's Workspace list may name.
bool is_plausible_id(std::string_view id);
// ^[A-Za-z_][A-Za-z0-9_]*$ (≤ 128) — public Output names.
bool is_valid_output_name(std::string_view name);
// Relative, no "..", no backslash or control characters; "" and "." mean the repository root.
Status validate_module_path(std::string_view path);

// Which agents take a Capsule's Runs (Capsule::agent_pool, agent_labels).
struct AgentRequirements {
  std::string pool = std::string(kDefaultPool);
  std::vector<std::string> labels;  // sorted, unique
};

struct CapsuleRequest {
  std::string name;
  CapsuleSource source;
  OutputAllowlist output_allowlist;
  protocol::Variables variables;
  protocol::RunPolicy policy;  // the default policy when the request has none
  AgentRequirements agents;
  std::optional<std::string> opentofu_version;  // a valid constraint; nullopt: none
};

// A change of a Capsule (PATCH /api/v1/capsules/{id}): what the body names, each validated as at
// creation; nullopt: kept.
struct CapsuleChange {
  std::optional<std::string> name;
  std::optional<CapsuleSource> source;  // whole, the current fields the body left out filled in
  bool source_connection_given = false;  // the body's source named "connection"
  std::optional<OutputAllowlist> output_allowlist;
  std::optional<protocol::Variables> variables;
  bool empty() const { return !name && !source && !output_allowlist && !variables; }
};

// `from` with `change` made: the source whole, its Connection kept unless the change names it.
Capsule with_change(const Capsule& from, const CapsuleChange& change);

Result<std::string> parse_workspace_request(const json::object& body);
// {"name", "source": {"gitUrl", "ref", "modulePath", "connection"} (any of them), "outputAllowlist",
// "variables"}: at least one; anything else is refused, naming where it is changed instead.
Result<CapsuleChange> parse_capsule_change(const json::object& body, const Capsule& current);
Result<CapsuleRequest> parse_capsule_request(const json::object& body);
// A Capsule's "policy" object (also the body of PUT /capsules/{id}/policy). Unknown fields are
// refused, so a misspelt deny list is not silently dropped; errors name "policy.<field>".
Result<protocol::RunPolicy> parse_policy(const json::object& o);
// "agentPool" (a pool name, "default" when absent) and "agentLabels" (labels, none when absent)
// of a Capsule request or of PUT /capsules/{id}/agent-requirements. Whether the pool exists is
// the caller's check (AgentPoolStore::get).
Result<AgentRequirements> parse_agent_requirements(const json::object& body);
// "opentofuVersion" of a Capsule request or of PUT /capsules/{id}/opentofu-version: a version
// constraint (protocol/version_constraint.hpp), at most 256 bytes; absent, null or "" is none.
Result<std::optional<std::string>> parse_opentofu_version(const json::object& body);

// Allowlist and variables travel as camelCase JSON; stored in SQLite in the same form.
Result<OutputAllowlist> allowlist_from_json(const json::object& o);

}  // namespace takosumi::controlplane

namespace takosumi::controlplane {

// Keeps only values whose public name is in the allowlist and whose JSON type matches the
// mapping's type ("any" accepts everything): the view of the Capsule's current mapping, so a value
// it no longer maps, or maps as another type, is left out (it stays stored). A mapping of an
// unknown type is invalid_argument naming it (protocol/output_type.hpp), as in the runner.
Result<json::object> filter_outputs(const json::object& values, const OutputAllowlist& allowlist);

}  // namespace takosumi::controlplane
