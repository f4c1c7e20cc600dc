#include "protocol/run_report.hpp"

#include <type_traits>

#include "common/error_codes.hpp"
#include "common/strict_json.hpp"
#include "protocol/failure_codes.hpp"

namespace takosumi::protocol {
namespace {

// Lists of resources are bounded by the report's size (kMaxRunReportBytes) rather than a count
// of their own: a plan of 100,000 resources is a real plan. Lists of names stay short.
constexpr std::size_t kMaxResources = 1'000'000;
constexpr std::size_t kMaxNames = 10'000;

json::array strings_to_json(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

Result<std::vector<std::string>> strings_from_json(const json::array* a, std::string_view what) {
  std::vector<std::string> out;
  if (!a) return out;
  if (a->size() > kMaxNames) return fail(errc::kInvalidArgument, std::string(what) + ": too many");
  for (const auto& v : *a) {
    if (!v.is_string() || v.get_string().size() > 1024)
      return fail(errc::kInvalidArgument, std::string(what) + " must hold strings");
    out.emplace_back(v.get_string());
  }
  return out;
}

// Every entry of one of the report's resource lists (resourceChanges, dataLoss, drift.resources),
// read by `entry`; at most kMaxResources of them, and a refused entry names its list.
template <class Entry,
          class T = typename std::invoke_result_t<Entry, const json::value&>::value_type>
Result<std::vector<T>> entries_from_json(const json::array& list, std::string_view name,
                                         Entry entry) {
  if (list.size() > kMaxResources)
    return fail(errc::kInvalidArgument, "too many " + std::string(name) + " entries");
  std::vector<T> out;
  out.reserve(list.size());
  for (const auto& v : list) {
    auto read = entry(v);
    if (!read) return std::unexpected(read.error().with_context(name));
    out.push_back(std::move(*read));
  }
  return out;
}

// The address and type every resource entry of a report names, within one set of bounds.
struct NamedResource {
  std::string address;
  std::string type;
};

Result<NamedResource> named_resource(const json::object& o) {
  auto address = get_string(o, "address", 2048);
  auto type = get_string(o, "type", 256);
  if (const Error* e = first_error(address, type)) return std::unexpected(*e);
  return NamedResource{std::move(*address), std::move(*type)};
}

Result<ResourceChange> change_from_json(const json::value& v) {
  auto entry =
      entry_object(v, "resourceChanges entries", {"address", "type", "actions", "delete", "replace"});
  if (!entry) return std::unexpected(entry.error());
  const json::object& o = **entry;
  auto named = named_resource(o);
  if (!named) return std::unexpected(named.error());
  auto actions = get_optional_array(o, "actions");
  if (!actions) return std::unexpected(actions.error());
  auto list = strings_from_json(*actions, "actions");
  if (!list) return std::unexpected(list.error());
  auto del = get_bool_or(o, "delete", false);
  auto rep = get_bool_or(o, "replace", false);
  if (!del) return std::unexpected(del.error());
  if (!rep) return std::unexpected(rep.error());
  return ResourceChange{std::move(named->address), std::move(named->type), std::move(*list), *del,
                        *rep};
}

Result<DataLossMark> mark_from_json(const json::value& v) {
  auto entry = entry_object(v, "dataLoss entries", {"address", "type", "action", "reason"});
  if (!entry) return std::unexpected(entry.error());
  auto named = named_resource(**entry);
  auto action = get_string(**entry, "action", 32);
  auto reason = get_optional_string(**entry, "reason", 1024);
  if (const Error* e = first_error(named, action, reason)) return std::unexpected(*e);
  return DataLossMark{std::move(named->address), std::move(named->type), *action,
                      reason->value_or("")};
}

Result<DriftedResource> drifted_from_json(const json::value& v) {
  auto entry = entry_object(v, "drift resources", {"address", "type", "action", "attributes"});
  if (!entry) return std::unexpected(entry.error());
  auto named = named_resource(**entry);
  auto action = get_optional_string(**entry, "action", 32);
  auto attrs = get_optional_array(**entry, "attributes");
  if (const Error* e = first_error(named, action, attrs)) return std::unexpected(*e);
  auto names = strings_from_json(*attrs, "attributes");
  if (!names) return std::unexpected(names.error());
  return DriftedResource{std::move(named->address), std::move(named->type), action->value_or(""),
                         std::move(*names)};
}

Result<std::optional<DriftReport>> drift_from_json(const json::object& o) {
  auto d = get_optional_object(o, "drift");
  if (!d) return std::unexpected(d.error());
  if (!*d) return std::optional<DriftReport>{};
  TAKOSUMI_TRY(check_known_fields(**d, {"status", "resources"}, "drift"));
  auto status = get_string(**d, "status", 16);
  if (!status) return std::unexpected(status.error().with_context("drift"));
  if (*status != "no_drift" && *status != "drift" && *status != "error")
    return fail(errc::kInvalidArgument, "drift.status must be no_drift, drift or error");
  DriftReport report{*status, {}};
  auto list = get_optional_array(**d, "resources");
  if (!list) return std::unexpected(list.error());
  if (*list) {
    auto resources = entries_from_json(**list, "drift.resources", drifted_from_json);
    if (!resources) return std::unexpected(resources.error());
    report.resources = std::move(*resources);
  }
  return std::optional<DriftReport>(std::move(report));
}

Status parse_marks(const json::object& o, RunReport& r) {
  auto loss = get_optional_array(o, "dataLoss");
  if (!loss) return std::unexpected(loss.error());
  if (*loss) {
    auto marks = data_loss_from_json(**loss);
    if (!marks) return std::unexpected(marks.error());
    r.data_loss = std::move(*marks);
  }
  auto drift = drift_from_json(o);
  if (!drift) return std::unexpected(drift.error());
  r.drift = std::move(*drift);
  return {};
}

Result<RunReport> parse(const json::object& o) {
  TAKOSUMI_TRY(check_known_fields(
      o, {"leaseToken", "attempt", "status", "failure", "hasChanges", "changeSummary",
          "resourceChanges", "dataLoss", "drift", "planDigest", "planArtifactSha256",
          "planViewSha256", "providerLockSha256", "sourceCommit", "tofuVersion", "tofuBuild", "newState", "outputs",
          "refusedOutputs", "envNames", "phaseMillis"}));
  RunReport r;
  auto lease = get_string(o, "leaseToken", 256);
  if (!lease) return std::unexpected(lease.error());
  r.lease_token = *lease;
  auto attempt = get_int(o, "attempt");
  if (!attempt) return std::unexpected(attempt.error());
  r.attempt = *attempt;
  auto status = get_string(o, "status", 32);
  if (!status) return std::unexpected(status.error());
  if (*status != "succeeded" && *status != "failed")
    return fail(errc::kInvalidArgument, "status must be \"succeeded\" or \"failed\"");
  r.status = *status;
  if (auto f = get_optional_object(o, "failure"); !f) {
    return std::unexpected(f.error());
  } else if (*f) {
    TAKOSUMI_TRY(check_known_fields(**f, {"code", "message"}, "failure"));
    auto code = get_string(**f, "code", 64);
    auto msg = get_optional_string(**f, "message", kMaxFailureMessageBytes);
    if (!code) return std::unexpected(code.error());
    if (!msg) return std::unexpected(msg.error());
    // A code no Run may end with (an agent's bug, or a newer agent) is kept in the message under
    // internal: refusing the report would strand the Run and the state it may carry.
    Error reported = as_run_failure(Error{*code, msg->value_or("")}, errc::kInternal);
    r.failure_code = std::move(reported.code);
    r.failure_message = std::move(reported.message);
  }
  if (r.status == "failed" && r.failure_code.empty())
    return fail(errc::kInvalidArgument, "a failed report needs failure.code");
  auto changes = get_bool_or(o, "hasChanges", false);
  if (!changes) return std::unexpected(changes.error());
  r.has_changes = *changes;
  if (auto s = get_optional_object(o, "changeSummary"); !s) {
    return std::unexpected(s.error());
  } else if (*s) {
    TAKOSUMI_TRY(check_known_fields(**s, {"add", "change", "destroy", "replace"}, "changeSummary"));
    for (auto [key, dst] : {std::pair{"add", &r.summary.add}, std::pair{"change", &r.summary.change},
                            std::pair{"destroy", &r.summary.destroy},
                            std::pair{"replace", &r.summary.replace}}) {
      auto v = get_optional_int(**s, key);
      if (!v) return std::unexpected(v.error());
      *dst = v->value_or(0);
    }
  }
  auto rc = get_optional_array(o, "resourceChanges");
  if (!rc) return std::unexpected(rc.error());
  if (*rc) {
    auto changes = entries_from_json(**rc, "resourceChanges", change_from_json);
    if (!changes) return std::unexpected(changes.error());
    r.resource_changes = std::move(*changes);
  }
  TAKOSUMI_TRY(parse_marks(o, r));
  auto opt = [&](std::string_view key, std::string& dst, std::size_t max) -> Status {
    auto v = get_optional_string(o, key, max);
    if (!v) return std::unexpected(v.error());
    dst = v->value_or("");
    return {};
  };
  TAKOSUMI_TRY(opt("planDigest", r.plan_digest, 64));
  TAKOSUMI_TRY(opt("planArtifactSha256", r.plan_artifact_sha256, 64));
  TAKOSUMI_TRY(opt("planViewSha256", r.plan_view_sha256, 64));
  TAKOSUMI_TRY(opt("providerLockSha256", r.provider_lock_sha256, 64));
  TAKOSUMI_TRY(opt("sourceCommit", r.source_commit, 64));
  TAKOSUMI_TRY(opt("tofuVersion", r.tofu_version, 64));
  TAKOSUMI_TRY(opt("tofuBuild", r.tofu_build, 64));
  if (auto ns = get_optional_object(o, "newState"); !ns) {
    return std::unexpected(ns.error());
  } else if (*ns) {
    TAKOSUMI_TRY(check_known_fields(
        **ns, {"artifactSha256", "plaintextSha256", "serial", "lineage", "priorGeneration"},
        "newState"));
    auto a = get_string(**ns, "artifactSha256", 64);
    auto p = get_string(**ns, "plaintextSha256", 64);
    auto serial = get_int(**ns, "serial");
    auto lineage = get_string(**ns, "lineage", 128);
    auto prior = get_int(**ns, "priorGeneration");
    if (const Error* e = first_error(a, p, serial, lineage, prior))
      return std::unexpected(e->with_context("newState"));
    r.new_state = NewStateDescriptor{*a, *p, *serial, *lineage, *prior};
  }
  if (auto out = get_optional_object(o, "outputs"); !out) {
    return std::unexpected(out.error());
  } else if (*out) {
    // Each published Output is checked on the agent; all of them together stay small, whatever
    // size the report may have.
    if (const auto bytes = json::serialize(**out).size(); bytes > kMaxPublishedOutputsBytes)
      return fail(errc::kInvalidArgument, "outputs are " + std::to_string(bytes) +
                                              " bytes together, more than " +
                                              std::to_string(kMaxPublishedOutputsBytes));
    r.outputs = **out;
  }
  if (auto refused = get_optional_array(o, "refusedOutputs"); !refused) {
    return std::unexpected(refused.error());
  } else if (*refused) {
    if ((*refused)->size() > 256) return fail(errc::kInvalidArgument, "too many refusedOutputs");
    for (const auto& item : **refused) {
      if (!item.is_object()) return fail(errc::kInvalidArgument, "refusedOutputs[] must be objects");
      TAKOSUMI_TRY(check_known_fields(item.get_object(), {"name", "reason"}, "refusedOutputs[]"));
      auto name = get_string(item.get_object(), "name", 128);
      auto reason = get_string(item.get_object(), "reason", 512);
      if (!name) return std::unexpected(name.error().with_context("refusedOutputs[]"));
      if (!reason) return std::unexpected(reason.error().with_context("refusedOutputs[]"));
      r.refused_outputs.push_back(RefusedOutput{*name, *reason});
    }
  }
  auto env = get_optional_array(o, "envNames");
  if (!env) return std::unexpected(env.error());
  auto names = strings_from_json(*env, "envNames");
  if (!names) return std::unexpected(names.error());
  r.env_names = std::move(*names);
  if (auto t = get_optional_object(o, "phaseMillis"); !t) {
    return std::unexpected(t.error());
  } else if (*t) {
    for (const auto& kv : **t)
      if (kv.value().is_int64()) r.phase_millis[std::string(kv.key())] = kv.value().get_int64();
  }
  return r;
}

}  // namespace

json::object to_json(const RunReport& r) {
  json::object o;
  o["leaseToken"] = r.lease_token;
  o["attempt"] = r.attempt;
  o["status"] = r.status;
  if (!r.failure_code.empty())
    o["failure"] = json::object{{"code", r.failure_code}, {"message", r.failure_message}};
  o["hasChanges"] = r.has_changes;
  o["changeSummary"] = json::object{{"add", r.summary.add}, {"change", r.summary.change},
                                    {"destroy", r.summary.destroy}, {"replace", r.summary.replace}};
  json::array changes;
  for (const auto& c : r.resource_changes)
    changes.emplace_back(json::object{{"address", c.address}, {"type", c.type},
                                      {"actions", strings_to_json(c.actions)},
                                      {"delete", c.is_delete}, {"replace", c.is_replace}});
  o["resourceChanges"] = std::move(changes);
  json::array loss;
  for (const auto& m : r.data_loss)
    loss.emplace_back(json::object{{"address", m.address}, {"type", m.type},
                                   {"action", m.action}, {"reason", m.reason}});
  o["dataLoss"] = std::move(loss);
  if (r.drift) {
    json::array drifted;
    for (const auto& d : r.drift->resources)
      drifted.emplace_back(json::object{{"address", d.address}, {"type", d.type},
                                        {"action", d.action},
                                        {"attributes", strings_to_json(d.attributes)}});
    o["drift"] = json::object{{"status", r.drift->status}, {"resources", std::move(drifted)}};
  }
  if (!r.plan_digest.empty()) o["planDigest"] = r.plan_digest;
  if (!r.plan_artifact_sha256.empty()) o["planArtifactSha256"] = r.plan_artifact_sha256;
  if (!r.plan_view_sha256.empty()) o["planViewSha256"] = r.plan_view_sha256;
  if (r.new_state)
    o["newState"] = json::object{{"artifactSha256", r.new_state->artifact_sha256},
                                 {"plaintextSha256", r.new_state->plaintext_sha256},
                                 {"serial", r.new_state->serial},
                                 {"lineage", r.new_state->lineage},
                                 {"priorGeneration", r.new_state->prior_generation}};
  o["outputs"] = r.outputs;
  json::array refused;
  for (const auto& ro : r.refused_outputs)
    refused.emplace_back(json::object{{"name", ro.name}, {"reason", ro.reason}});
  o["refusedOutputs"] = std::move(refused);
  o["providerLockSha256"] = r.provider_lock_sha256;
  o["sourceCommit"] = r.source_commit;
  o["tofuVersion"] = r.tofu_version;
  // Only when one was chosen: a control plane from before tofu.versionsDir refuses unknown fields.
  if (!r.tofu_build.empty()) o["tofuBuild"] = r.tofu_build;
  o["envNames"] = strings_to_json(r.env_names);
  json::object timings;
  for (const auto& [k, v] : r.phase_millis) timings[k] = v;
  o["phaseMillis"] = std::move(timings);
  return o;
}

Result<RunReport> run_report_from_json(const json::object& o) {
  return with_context(parse(o), "run report");
}

Result<RunReport> run_report_from_text(std::string_view text) {
  auto o = parse_object(text, kMaxRunReportBytes);
  if (!o) return std::unexpected(o.error().with_context("run report"));
  return run_report_from_json(*o);
}

std::string bounded_failure_message(std::string why) {
  if (why.size() > kMaxFailureMessageBytes) {
    std::size_t cut = kMaxFailureMessageBytes;
    while (cut > 0 && (static_cast<unsigned char>(why[cut]) & 0xC0) == 0x80) --cut;
    why.resize(cut);
  }
  return why;
}

RunReport result_too_large(const RunReport& r, std::string why) {
  RunReport out = r;
  why += "; the Run itself " + r.status;
  if (!r.failure_code.empty()) why += " (" + r.failure_code + ": " + r.failure_message + ")";
  out.status = "failed";
  out.failure_code = std::string(errc::kResultTooLarge);
  out.failure_message = bounded_failure_message(std::move(why));
  out.resource_changes.clear();
  out.data_loss.clear();
  if (out.drift) out.drift = DriftReport{"error", {}};
  out.outputs.clear();
  out.refused_outputs.clear();
  return out;
}

Result<std::vector<DataLossMark>> data_loss_from_json(const json::array& marks) {
  return entries_from_json(marks, "dataLoss", mark_from_json);
}

Result<std::vector<DataLossMark>> data_loss_from_text(std::string_view text) {
  auto v = parse_json_strict(text);
  if (!v) return std::unexpected(v.error().with_context("dataLoss"));
  if (!v->is_array()) return fail(errc::kInvalidArgument, "dataLoss must be an array");
  return data_loss_from_json(v->get_array());
}

}  // namespace takosumi::protocol
