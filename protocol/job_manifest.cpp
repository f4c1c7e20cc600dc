#include "protocol/job_manifest.hpp"

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "protocol/version_constraint.hpp"

namespace takosumi::protocol {
namespace {

constexpr std::size_t kMaxEntries = 256;
// base64 of a sealed SecretBundle of at most 512 KiB (protocol/secret_bundle.hpp).
constexpr std::size_t kMaxSealedSecrets = 700 * 1024;

json::object prior_to_json(const PriorState& p) {
  return {{"stateVersionId", p.state_version_id}, {"generation", p.generation},
          {"plaintextSha256", p.plaintext_sha256}, {"serial", p.serial},
          {"lineage", p.lineage}, {"sealedDek", p.sealed_dek}};
}

Result<PriorState> prior_from_json(const json::object& o) {
  PriorState p;
  auto id = get_string(o, "stateVersionId", 128);
  auto gen = get_int(o, "generation");
  auto sha = get_string(o, "plaintextSha256", 64);
  auto serial = get_int(o, "serial");
  auto lineage = get_string(o, "lineage", 128);
  auto dek = get_string(o, "sealedDek", 512);
  if (const Error* e = first_error(id, gen, sha, serial, lineage, dek)) return std::unexpected(*e);
  return PriorState{*id, *gen, *sha, *serial, *lineage, *dek};
}

Result<std::map<std::string, OutputMapping>> allowlist_from_json(const json::object* o) {
  std::map<std::string, OutputMapping> out;
  if (!o) return out;
  if (o->size() > kMaxEntries) return fail(errc::kInvalidArgument, "too many outputs mapped");
  for (const auto& kv : *o) {
    if (!kv.value().is_object())
      return fail(errc::kInvalidArgument,
                  "outputAllowlist entry \"" + std::string(kv.key()) + "\" must be an object");
    const auto& e = kv.value().get_object();
    auto from = get_string(e, "from", 256);
    if (!from) return std::unexpected(from.error());
    auto type = get_optional_string(e, "type", 32);
    if (!type) return std::unexpected(type.error());
    auto required = get_bool_or(e, "required", false);
    if (!required) return std::unexpected(required.error());
    out.emplace(std::string(kv.key()), OutputMapping{*from, type->value_or("any"), *required});
  }
  return out;
}

Result<JobManifest> parse(const json::object& o) {
  JobManifest m;
  auto str = [&](std::string_view key, std::string& dst, std::size_t max) -> Status {
    auto r = get_string(o, key, max);
    if (!r) return std::unexpected(r.error());
    dst = std::move(*r);
    return {};
  };
  auto num = [&](std::string_view key, std::int64_t& dst) -> Status {
    auto r = get_int(o, key);
    if (!r) return std::unexpected(r.error());
    dst = *r;
    return {};
  };
  TAKOSUMI_TRY(str("runId", m.run_id, 128));
  TAKOSUMI_TRY(num("attempt", m.attempt));
  TAKOSUMI_TRY(str("agentId", m.agent_id, 128));
  std::string type;
  TAKOSUMI_TRY(str("type", type, 32));
  auto t = run_type_from_string(type);
  if (!t) return fail(errc::kInvalidArgument, "unknown run type \"" + type + "\"");
  m.type = *t;
  TAKOSUMI_TRY(str("workspaceId", m.workspace_id, 128));
  TAKOSUMI_TRY(str("capsuleId", m.capsule_id, 128));
  auto src = get_object(o, "source");
  if (!src) return std::unexpected(src.error());
  auto url = get_string(**src, "url", 4096);
  auto commit = get_string(**src, "commit", 64);
  auto mp = get_optional_string(**src, "modulePath", 1024);
  if (!url) return std::unexpected(url.error());
  if (!commit) return std::unexpected(commit.error());
  if (!mp) return std::unexpected(mp.error());
  auto tree = get_optional_string(**src, "tree", 64);
  auto pack = get_optional_string(**src, "packSha256", 64);
  if (!tree) return std::unexpected(tree.error());
  if (!pack) return std::unexpected(pack.error());
  m.source = SourceSpec{*url, *commit, mp->value_or(""), tree->value_or(""), pack->value_or("")};
  TAKOSUMI_TRY(with_context(read_optional_object(o, "priorState", prior_from_json, m.prior_state),
                            "priorState"));
  auto plan = get_optional_object(o, "savedPlan");
  if (!plan) return std::unexpected(plan.error());
  if (*plan) {
    auto d = get_string(**plan, "digest", 64);
    auto k = get_string(**plan, "sealedDek", 512);
    auto version = get_optional_string(**plan, "tofuVersion", 64);
    auto build = get_optional_string(**plan, "tofuBuild", 64);
    if (const Error* e = first_error(d, k, version, build))
      return std::unexpected(e->with_context("savedPlan"));
    m.saved_plan = SavedPlanRef{*d, *k, version->value_or(""), build->value_or("")};
  }
  TAKOSUMI_TRY(read_optional_object(o, "variables", variables_from_json, m.variables));
  auto allow = get_optional_object(o, "outputAllowlist");
  if (!allow) return std::unexpected(allow.error());
  auto am = allowlist_from_json(*allow);
  if (!am) return std::unexpected(am.error());
  m.output_allowlist = std::move(*am);
  auto secrets = get_optional_string(o, "secrets", kMaxSealedSecrets);
  if (!secrets) return std::unexpected(secrets.error());
  m.sealed_secrets = secrets->value_or("");
  TAKOSUMI_TRY(
      with_context(read_optional_object(o, "policy", run_policy_from_json, m.policy), "policy"));
  TAKOSUMI_TRY(str("controlPublicKey", m.control_public_key, 128));
  TAKOSUMI_TRY(str("controlKeyId", m.control_key_id, 128));
  TAKOSUMI_TRY(num("issuedAt", m.issued_at));
  TAKOSUMI_TRY(num("expiresAt", m.expires_at));
  TAKOSUMI_TRY(str("nonce", m.nonce, 128));
  auto lease = get_optional_string(o, "leaseSha256", 64);
  if (!lease) return std::unexpected(lease.error());
  m.lease_sha256 = lease->value_or("");
  auto opentofu = get_optional_string(o, "opentofuVersion", 256);
  if (!opentofu) return std::unexpected(opentofu.error());
  m.opentofu_version = opentofu->value_or("");
  if (!m.opentofu_version.empty())
    if (auto c = parse_version_constraint(m.opentofu_version); !c)
      return std::unexpected(c.error().with_context("opentofuVersion"));
  if (m.type == RunType::apply && !m.saved_plan)
    return fail(errc::kInvalidArgument, "an apply manifest must name a savedPlan");
  return m;
}

}  // namespace

json::object to_json(const std::map<std::string, OutputMapping>& mappings) {
  json::object o;
  for (const auto& [name, m] : mappings)
    o[name] = json::object{{"from", m.from}, {"type", m.type}, {"required", m.required}};
  return o;
}

json::object to_json(const JobManifest& m) {
  json::object allow = to_json(m.output_allowlist);
  json::object o{{"runId", m.run_id},           {"attempt", m.attempt},
                 {"agentId", m.agent_id},       {"type", to_string(m.type)},
                 {"workspaceId", m.workspace_id}, {"capsuleId", m.capsule_id},
                 {"variables", to_json(m.variables)}, {"outputAllowlist", std::move(allow)},
                 {"policy", to_json(m.policy)}, {"controlPublicKey", m.control_public_key},
                 {"controlKeyId", m.control_key_id}, {"issuedAt", m.issued_at},
                 {"expiresAt", m.expires_at},   {"nonce", m.nonce}};
  json::object source{
      {"url", m.source.url}, {"commit", m.source.commit}, {"modulePath", m.source.module_path}};
  if (!m.source.tree.empty()) source["tree"] = m.source.tree;
  if (!m.source.pack_sha256.empty()) source["packSha256"] = m.source.pack_sha256;
  o["source"] = std::move(source);
  if (m.prior_state) o["priorState"] = prior_to_json(*m.prior_state);
  if (m.saved_plan) {
    json::object plan{{"digest", m.saved_plan->digest}, {"sealedDek", m.saved_plan->sealed_dek}};
    if (!m.saved_plan->tofu_version.empty()) plan["tofuVersion"] = m.saved_plan->tofu_version;
    if (!m.saved_plan->tofu_build.empty()) plan["tofuBuild"] = m.saved_plan->tofu_build;
    o["savedPlan"] = std::move(plan);
  }
  if (!m.sealed_secrets.empty()) o["secrets"] = m.sealed_secrets;
  if (!m.lease_sha256.empty()) o["leaseSha256"] = m.lease_sha256;
  if (!m.opentofu_version.empty()) o["opentofuVersion"] = m.opentofu_version;
  return o;
}

Result<JobManifest> job_manifest_from_json(const json::object& o) {
  auto r = parse(o);
  if (!r) return fail(errc::kManifestInvalid, "job manifest: " + r.error().message);
  return r;
}

}  // namespace takosumi::protocol
