#pragma once
// What the agent reports when a Run attempt ends (body of POST /agent/v1/runs/{id}/complete).
// Carries no secret: outputs are only allowlisted non-sensitive values, env vars by name only.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/failure_codes.hpp"  // what failure_code holds
#include "common/json_fields.hpp"

namespace takosumi::protocol {

struct ResourceChange {
  std::string address;
  std::string type;
  std::vector<std::string> actions;  // OpenTofu's actions, e.g. ["delete","create"]
  bool is_delete = false;
  bool is_replace = false;
};

// A deleted or replaced resource whose kind holds data (a database, bucket, volume, file …):
// applying the plan loses what it stores. Apply refuses such a plan unless explicitly accepted.
struct DataLossMark {
  std::string address;
  std::string type;
  std::string action;  // "delete" | "replace"
  std::string reason;  // which rule matched, e.g. "type matches *_database*"
};

// One resource whose real object differs from the stored state (drift check). Attribute names
// only: values never leave the agent.
struct DriftedResource {
  std::string address;
  std::string type;
  std::string action;                   // OpenTofu's refresh-only action: "update" | "delete"
  std::vector<std::string> attributes;  // top-level attribute names that differ
};

struct DriftReport {
  std::string status;  // "no_drift" | "drift" | "error"
  std::vector<DriftedResource> resources;
};

struct ChangeSummary {
  std::int64_t add = 0;
  std::int64_t change = 0;
  std::int64_t destroy = 0;
  std::int64_t replace = 0;
};

// Descriptor of the new state the agent uploaded as an artifact.
struct NewStateDescriptor {
  std::string artifact_sha256;   // sha256 of the ciphertext (artifact id)
  std::string plaintext_sha256;
  std::int64_t serial = 0;
  std::string lineage;
  std::int64_t prior_generation = 0;  // fencing: the generation the Run started from
};

// The reason of a RefusedOutput that OpenTofu marks sensitive: never published, and never mapped
// to another Capsule (a Dependency or OutputShare naming it is refused).
inline constexpr std::string_view kSensitiveOutputReason = "sensitive in the module";

// A mapped Output that was not published: its value looks like a credential, or the module marks
// it sensitive (kSensitiveOutputReason).
struct RefusedOutput {
  std::string name;    // public name
  std::string reason;  // e.g. "a URL with a password in its userinfo"; never the value
};

struct RunReport {
  std::string lease_token;
  std::int64_t attempt = 0;
  std::string status;  // "succeeded" | "failed"
  std::string failure_code;
  std::string failure_message;  // redacted
  bool has_changes = false;
  ChangeSummary summary;
  std::vector<ResourceChange> resource_changes;
  std::vector<DataLossMark> data_loss;
  std::optional<DriftReport> drift;  // drift_check runs only
  std::string plan_digest;           // plan runs: sha256 of the plaintext saved plan
  std::string plan_artifact_sha256;  // plan runs: sha256 of the uploaded ciphertext
  std::string plan_view_sha256;      // plan runs: sha256 of the uploaded plan view (plan_view.hpp)
  std::optional<NewStateDescriptor> new_state;
  json::object outputs;  // public name → value; allowlisted and non-sensitive only
  std::vector<RefusedOutput> refused_outputs;
  std::string provider_lock_sha256;
  std::string source_commit;
  std::string tofu_version;  // what `tofu version` said
  // The tofu.versionsDir entry the Run used (its directory name); empty for tofu.binary.
  std::string tofu_build;
  std::vector<std::string> env_names;
  std::map<std::string, std::int64_t> phase_millis;
};

// A report's serialised size decides how it travels (docs/protocol.md "Complete"): up to
// kMaxInlineReportBytes as the JSON body of POST .../complete; larger, streamed as the body of
// PUT .../report; never larger than kMaxRunReportBytes, which both sides refuse
// (result_too_large). Published Outputs together stay under kMaxPublishedOutputsBytes.
inline constexpr std::size_t kMaxInlineReportBytes = 512 * 1024;
inline constexpr std::size_t kMaxRunReportBytes = 16 * 1024 * 1024;
inline constexpr std::size_t kMaxPublishedOutputsBytes = 1024 * 1024;
// failure.message, as the control plane reads it.
inline constexpr std::size_t kMaxFailureMessageBytes = 16 * 1024;
// why, cut to kMaxFailureMessageBytes before a UTF-8 continuation byte: a report must never be
// refused for its message.
std::string bounded_failure_message(std::string why);

json::object to_json(const RunReport& r);
// parse_object within kMaxRunReportBytes, then run_report_from_json.
Result<RunReport> run_report_from_text(std::string_view text);

// What is left of a report the control plane cannot take (too large): a failed Run with code
// result_too_large and `why` (followed by how the Run itself ended, its own code and message),
// without the unbounded lists (resource changes, data-loss marks, drifted resources, refused
// outputs) and without Outputs; the new state, the plan artifact and the Run's facts (commit, tofu
// version, lock digest, timings) are kept, so nothing an apply did is forgotten.
RunReport result_too_large(const RunReport& r, std::string why);
Result<RunReport> run_report_from_json(const json::object& o);

// The one reader of data-loss marks: a report's "dataLoss" array, and the same array as the
// control plane stores it. Every entry must be a whole mark (address, type, action; reason
// optional), so none is ever skipped; invalid_argument naming what is wrong otherwise.
Result<std::vector<DataLossMark>> data_loss_from_json(const json::array& marks);
Result<std::vector<DataLossMark>> data_loss_from_text(std::string_view text);

}  // namespace takosumi::protocol
