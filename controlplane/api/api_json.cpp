#include "controlplane/api/api_json.hpp"

#include <boost/json/parse.hpp>

#include "common/clock.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "protocol/source_url.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

// Stored JSON text written by this process; falls back when absent.
json::value stored_json(const std::optional<std::string>& text, json::value fallback) {
  if (!text) return fallback;
  boost::system::error_code ec;
  json::value v = json::parse(*text, ec);
  return ec ? fallback : v;
}

}  // namespace

json::array string_array(const std::vector<std::string>& items) {
  return json::array(items.begin(), items.end());
}

json::value optional_value(const std::optional<std::string>& s) {
  if (!s) return nullptr;
  return json::value(*s);
}

json::value optional_value(const std::optional<std::int64_t>& v) {
  if (!v) return nullptr;
  return json::value(*v);
}

json::value time_value(std::int64_t unix_seconds) { return json::value(utc_timestamp(unix_seconds)); }

json::value time_value(const std::optional<std::int64_t>& unix_seconds) {
  if (!unix_seconds) return nullptr;
  return time_value(*unix_seconds);
}

json::object to_json(const Workspace& ws) {
  return {{"id", ws.id}, {"name", ws.name}, {"createdAt", time_value(ws.created_at)}};
}

json::object to_json(const Capsule& c) {
  return {{"id", c.id},
          {"workspaceId", c.workspace_id},
          {"name", c.name},
          // Shown without credentials even where a record from before they were refused kept some.
          {"source", json::object{{"gitUrl", protocol::display_source_url(c.source.git_url)},
                                  {"ref", c.source.ref},
                                  {"modulePath", c.source.module_path},
                                  {"connection", optional_value(c.source.connection_id)}}},
          {"outputAllowlist", protocol::to_json(c.output_allowlist)},
          {"variables", protocol::to_json(c.variables)},
          {"connections", string_array(c.connection_ids)},
          {"sensitiveVariableNames", string_array(c.sensitive_variable_names)},
          {"policy", protocol::to_json(c.policy)},
          {"agentPool", c.agent_pool},
          {"agentLabels", string_array(c.agent_labels)},
          {"opentofuVersion", optional_value(c.opentofu_version)},
          {"specRevision", c.spec_revision},
          {"createdAt", time_value(c.created_at)},
          {"destroyed", c.destroyed_at.has_value()},
          {"destroyedAt", time_value(c.destroyed_at)}};
}

json::object to_json(const Dependency& d) {
  return json::object{{"id", d.id},
                      {"workspaceId", d.workspace_id},
                      {"consumerCapsuleId", d.consumer_capsule_id},
                      {"producerCapsuleId", d.producer_capsule_id},
                      {"outputs", protocol::to_json(d.outputs)},
                      {"outputShareId", optional_value(d.output_share_id)},
                      {"createdAt", time_value(d.created_at)}};
}

json::object to_json(const OutputShare& s) {
  return json::object{{"id", s.id},
                      {"producerCapsuleId", s.producer_capsule_id},
                      {"fromWorkspaceId", s.from_workspace_id},
                      {"toWorkspaceId", s.to_workspace_id},
                      {"outputs", json::array(s.outputs.begin(), s.outputs.end())},
                      {"status", s.status},
                      {"createdBy", s.created_by},
                      {"createdAt", time_value(s.created_at)},
                      {"approvedBy", optional_value(s.approved_by)},
                      {"approvedAt", time_value(s.approved_at)},
                      {"revokedBy", optional_value(s.revoked_by)},
                      {"revokedAt", time_value(s.revoked_at)}};
}

json::object to_json(const Connection& c, std::int64_t now) {
  json::object o{{"id", c.id}, {"workspaceId", c.workspace_id}, {"name", c.name}, {"kind", c.kind}};
  if (c.kind != connection_kind::kGit) {  // a source credential is never a provider's
    o["provider"] = c.provider;
    o["authMode"] = protocol::to_string(c.auth_mode);
  }
  o["names"] = string_array(c.credential_names);
  o["status"] = std::string(c.status(now));
  o["createdAt"] = time_value(c.created_at);
  o["expiresAt"] = time_value(c.expires_at);
  o["revokedAt"] = time_value(c.revoked_at);
  return o;
}

json::object to_json(const AuditEvent& e) {
  return {{"id", e.id},
          {"at", time_value(e.at)},
          {"actor", e.actor},
          {"action", e.action},
          {"capsuleId", optional_value(e.capsule_id)},
          {"runId", optional_value(e.run_id)},
          {"connectionId", optional_value(e.connection_id)},
          {"detail", e.detail}};
}

json::object to_json(const Run& r) {
  json::object o;
  o["id"] = r.id;
  o["capsuleId"] = r.capsule_id;
  o["workspaceId"] = r.workspace_id;
  o["type"] = protocol::to_string(r.type);
  o["status"] = r.status;
  o["attempt"] = r.attempt;
  o["sourceCommit"] = r.source_commit;
  o["specRevision"] = r.spec_revision;
  o["plannedBy"] = optional_value(r.planned_by);
  if (r.failure_code)
    o["failure"] = json::object{{"code", *r.failure_code},
                                {"message", r.failure_message.value_or("")}};
  else
    o["failure"] = nullptr;
  o["cancelRequested"] = r.cancel_requested;
  o["hasChanges"] = r.has_changes;
  o["changeSummary"] = stored_json(r.change_summary_json, nullptr);
  if (r.resource_changes_json) o["resourceChanges"] = stored_json(r.resource_changes_json, json::array{});
  o["planDigest"] = optional_value(r.plan_digest);
  o["priorStateVersionId"] = optional_value(r.prior_state_version_id);
  o["priorGeneration"] = optional_value(r.prior_generation);
  o["restoresStateVersionId"] = optional_value(r.restores_state_version_id);
  o["dataLoss"] = stored_json(r.data_loss_json, json::array{});
  o["dataLossAccepted"] = r.data_loss_accepted;
  o["drift"] = stored_json(r.drift_json, nullptr);
  o["refusedOutputs"] = stored_json(r.refused_outputs_json, json::array{});
  o["dependencyInputs"] = stored_json(r.dependency_inputs_json, json::array{});
  o["stateVersionId"] = optional_value(r.state_version_id);
  o["tofuVersion"] = optional_value(r.tofu_version);
  o["tofuBuild"] = optional_value(r.tofu_build);
  o["providerLockSha256"] = optional_value(r.provider_lock_sha256);
  o["envNames"] = stored_json(r.env_names_json, json::array{});
  o["phaseMillis"] = stored_json(r.phase_millis_json, json::object{});
  o["createdAt"] = time_value(r.created_at);
  o["startedAt"] = time_value(r.started_at);
  o["finishedAt"] = time_value(r.finished_at);
  return o;
}

json::object to_json(const StateVersion& sv) {
  return {{"id", sv.id},
          {"capsuleId", sv.capsule_id},
          {"generation", sv.generation},
          {"createdByRunId", sv.created_by_run_id},
          {"sourceCommit", sv.source_commit},
          {"serial", sv.serial},
          {"lineage", sv.lineage},
          {"plaintextSha256", sv.plaintext_sha256},
          {"ciphertextSha256", sv.ciphertext_sha256},
          {"createdAt", time_value(sv.created_at)},
          {"restoredFrom", optional_value(sv.restored_from)},
          {"partial", sv.partial}};
}

json::object logs_to_json(const std::string& run_id, const std::vector<LogChunk>& chunks) {
  json::array arr;
  std::string text;
  for (const auto& c : chunks) {
    arr.push_back(json::object{{"attempt", c.attempt}, {"seq", c.seq}, {"text", c.text}});
    text += c.text;
  }
  return {{"runId", run_id}, {"chunks", std::move(arr)}, {"text", std::move(text)}};
}

}  // namespace takosumi::controlplane
