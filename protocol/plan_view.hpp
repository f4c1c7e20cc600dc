#pragma once
// The plan a reviewer reads: GET /api/v1/runs/{id}/plan (docs/protocol.md "Plan view"). The agent
// makes it from `tofu show -json` of the frozen plan — the bytes that are sealed, whose digest an
// apply checks, and that the apply runs — redacts it before it leaves the host and uploads it as
// the plan Run's `plan_view` artifact; the control plane checks its shape and serves it as it came.
//
// Every value is one line of JSON text (`"a"`, `3`, `{"k":"v"}`), or one of two markers that no
// JSON text can be: kSensitiveValue for a value tofu marks sensitive, one that holds a Run secret
// (a Connection value, a sensitive variable) or one shaped like a credential; kUnknownValue for a
// value known only after apply. Every Output that changes is named; its values are shown only
// when the Capsule maps it, the module does not mark it sensitive and it does not look like a
// credential (`withheld` says which).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "protocol/run_report.hpp"  // ChangeSummary

namespace takosumi::protocol {

inline constexpr std::string_view kSensitiveValue = "(sensitive value)";
inline constexpr std::string_view kUnknownValue = "(known after apply)";

// A view's serialised size, on the agent (past it, resources are left out and counted) and on the
// control plane (a larger upload is refused).
inline constexpr std::size_t kMaxPlanViewBytes = 32u << 20;
// Each piece within it, so no single string can be most of it; the agent cuts longer ones.
inline constexpr std::size_t kMaxPlanAddressBytes = 2048;
inline constexpr std::size_t kMaxPlanPathBytes = 4096;
inline constexpr std::size_t kMaxPlanValueBytes = 8192;
inline constexpr std::size_t kMaxPlanOutputNameBytes = 256;

struct PlanAttribute {
  enum class Change { add, remove, update };
  std::string path;  // `tags.env`, `ingress[0].cidr_blocks[1]`, `labels["a/b"]`; "" for a whole value
  Change change = Change::update;
  std::optional<std::string> before;  // absent for add
  std::optional<std::string> after;   // absent for remove
  bool sensitive = false;             // before or after is kSensitiveValue
  bool unknown = false;               // after is kUnknownValue
  bool forces_replacement = false;
};

struct PlanResource {
  std::string address;
  std::string type;
  std::vector<std::string> actions;  // OpenTofu's, e.g. ["delete","create"]
  std::string action_reason;         // OpenTofu's, e.g. "replace_because_cannot_update"
  std::vector<PlanAttribute> attributes;
  bool attributes_truncated = false;
};

struct PlanOutput {
  std::string name;  // the module's output name
  std::vector<std::string> actions;
  // Why its values are not shown ("not mapped by the Capsule", "sensitive in the module", a
  // credential check's reason); empty when they are.
  std::string withheld;
  std::vector<PlanAttribute> attributes;  // empty when withheld
  bool attributes_truncated = false;
};

struct PlanView {
  std::string run_id;
  std::string plan_digest;  // sha256 of the sealed plan; empty for a plan without changes
  ChangeSummary summary;
  std::vector<PlanResource> resources;  // changes only (no no-op, no read)
  std::vector<PlanOutput> outputs;      // changes only
  std::int64_t resources_omitted = 0;   // left out to stay under kMaxPlanViewBytes
};

std::string_view to_string(PlanAttribute::Change c);

json::object to_json(const PlanView& v);
json::object to_json(const PlanResource& r);
json::object to_json(const PlanOutput& o);
// Strict: unknown fields, wrong types, negative counts, an attribute without the values its change
// needs, or text longer than its bound are invalid_argument naming the field.
Result<PlanView> plan_view_from_json(const json::object& o);
// parse_object within kMaxPlanViewBytes, then plan_view_from_json.
Result<PlanView> plan_view_from_text(std::string_view text);

}  // namespace takosumi::protocol
