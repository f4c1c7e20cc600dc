#include "protocol/offline_bundle.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "crypto/sha256.hpp"
#include "protocol/signed_document.hpp"

namespace takosumi::protocol {
namespace {

namespace json = boost::json;

Error invalid(std::string message) {
  return Error{std::string(errc::kBundleInvalid), std::move(message)};
}

// A signed document's codes, as a result bundle's.
Error as_bundle_error(Error e) {
  if (e.code == errc::kBackupSignatureInvalid) e.code = std::string(errc::kBundleSignatureInvalid);
  else if (e.code == errc::kBackupInvalid) e.code = std::string(errc::kBundleInvalid);
  return e;
}

}  // namespace

std::string envelope_member(std::string_view artifact_kind) {
  return std::string(artifact_kind) + ".env";
}

std::string artifact_member(std::string_view artifact_kind) {
  if (artifact_kind == "plan_view") return std::string(kPlanViewMember);
  return envelope_member(artifact_kind);
}

const std::vector<std::string>& run_bundle_members() {
  static const std::vector<std::string> names{std::string(kSourceMember), "prior_state.env",
                                              "plan.env"};
  return names;
}

const std::vector<std::string>& run_result_members() {
  static const std::vector<std::string> names{"report.json", "log.txt", "state.env", "plan.env",
                                              std::string(kPlanViewMember)};
  return names;
}

std::string offline_agent_id(std::string_view sign_public_key_base64) {
  return "agt_" +
         crypto::sha256_hex("takosumi offline agent\n" + std::string(sign_public_key_base64))
             .substr(0, 32);
}

std::string to_text(const RunBundleIndex& index) {
  return json::serialize(json::object{
      {"format", kRunBundleFormat},
      {"version", 1},
      {"runId", index.run_id},
      {"leaseToken", index.lease_token},
      {"leaseExpiresAt", index.lease_expires_at},
      {"manifest", json::object{{"payload", index.manifest.payload},
                                {"signature", index.manifest.signature}}},
      {"members", to_json(index.members)}});
}

Result<RunBundleIndex> run_bundle_index_from_text(std::string_view text) {
  auto o = parse_object(text, kMaxBundleIndexBytes);
  if (!o) return std::unexpected(invalid("the Run bundle's index: " + o.error().message));
  if (auto known = check_known_fields(*o, {"format", "version", "runId", "leaseToken",
                                           "leaseExpiresAt", "manifest", "members"});
      !known)
    return std::unexpected(invalid("the Run bundle's index: " + known.error().message));
  auto format = get_string(*o, "format", 64);
  auto version = get_int(*o, "version");
  if (!format || *format != kRunBundleFormat || !version || *version != 1)
    return std::unexpected(invalid("not a Run bundle of version 1 (a result bundle is imported "
                                   "on the connected side, not executed)"));
  RunBundleIndex index;
  auto run = get_string(*o, "runId", 128);
  auto lease = get_string(*o, "leaseToken", 128);
  auto expires = get_int(*o, "leaseExpiresAt");
  auto manifest = get_object(*o, "manifest");
  if (const Error* e = first_error(run, lease, expires, manifest))
    return std::unexpected(invalid("the Run bundle's index: " + e->message));
  auto payload = get_string(**manifest, "payload", kMaxBundleIndexBytes);
  auto signature = get_string(**manifest, "signature", 256);
  if (const Error* e = first_error(payload, signature))
    return std::unexpected(invalid("the Run bundle's manifest: " + e->message));
  const auto* listed = o->if_contains("members");
  if (listed == nullptr) return std::unexpected(invalid("the Run bundle's index has no members"));
  auto members = bundle_members_from_json(*listed, run_bundle_members());
  if (!members) return std::unexpected(members.error());
  index.run_id = std::move(*run);
  index.lease_token = std::move(*lease);
  index.lease_expires_at = *expires;
  index.manifest = SignedManifest{std::move(*payload), std::move(*signature)};
  index.members = std::move(*members);
  return index;
}

std::string sign_run_result(const RunResultIndex& index, const crypto::SignKeyPair& key) {
  const std::string payload = json::serialize(json::object{{"runId", index.run_id},
                                                           {"attempt", index.attempt},
                                                           {"agentId", index.agent_id},
                                                           {"leaseToken", index.lease_token},
                                                           {"members", to_json(index.members)}});
  return to_text(sign_document(std::string(kRunResultFormat), 1, payload, key));
}

Result<RunResultClaim> peek_run_result(std::string_view text) {
  auto outer = parse_object(text, kMaxBundleIndexBytes);
  if (!outer) return std::unexpected(invalid("not a result bundle: " + outer.error().message));
  auto payload = get_string(*outer, "payload", kMaxBundleIndexBytes);
  if (!payload) return std::unexpected(invalid("not a result bundle: " + payload.error().message));
  auto inner = parse_object(*payload, kMaxBundleIndexBytes);
  if (!inner) return std::unexpected(invalid("not a result bundle: " + inner.error().message));
  auto run = get_string(*inner, "runId", 128);
  auto agent = get_string(*inner, "agentId", 128);
  if (const Error* e = first_error(run, agent))
    return std::unexpected(invalid("not a result bundle: " + e->message));
  return RunResultClaim{std::move(*run), std::move(*agent)};
}

Result<RunResultIndex> open_run_result(std::string_view text, const crypto::SignPublicKey& trusted) {
  auto o = open_signed_document(text, kMaxBundleIndexBytes, kRunResultFormat, 1, trusted);
  if (!o) return std::unexpected(as_bundle_error(o.error()));
  if (auto known = check_known_fields(*o, {"runId", "attempt", "agentId", "leaseToken", "members"});
      !known)
    return std::unexpected(invalid("the result's index: " + known.error().message));
  auto run = get_string(*o, "runId", 128);
  auto attempt = get_int(*o, "attempt");
  auto agent = get_string(*o, "agentId", 128);
  auto lease = get_string(*o, "leaseToken", 128);
  if (const Error* e = first_error(run, attempt, agent, lease))
    return std::unexpected(invalid("the result's index: " + e->message));
  const auto* list = o->if_contains("members");
  if (list == nullptr) return std::unexpected(invalid("the result's index has no members"));
  auto members = bundle_members_from_json(*list, run_result_members());
  if (!members) return std::unexpected(members.error());
  return RunResultIndex{std::move(*run), *attempt, std::move(*agent), std::move(*lease),
                        std::move(*members)};
}

}  // namespace takosumi::protocol
