#pragma once
// The two files of an offline Run (docs/air-gapped.md, docs/protocol.md "Offline Run bundles"),
// both in the bundle framing of bundle_file.hpp:
// - A Run bundle, made by the control plane for one offline agent: its index is the job exactly
//   as a claim would hand it (run id, lease token, the signed manifest) and its members are what
//   the Run would otherwise download: the source as a Git pack, the prior state envelope, the
//   saved plan envelope. Nothing in it is trusted for being in the bundle: the agent checks each
//   member against the signed manifest as an online Run does.
// - A result bundle, made by the agent: its index is a document signed with the agent's Ed25519
//   key (signed_document.hpp) naming the Run, the attempt, the lease and each member's digest;
//   its members are what an online Run would upload: the report, the log, the sealed state or plan.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "crypto/keys.hpp"
#include "protocol/bundle_file.hpp"
#include "protocol/signed_manifest.hpp"

namespace takosumi::protocol {

inline constexpr std::string_view kRunBundleFormat = "takosumi-run-bundle";
inline constexpr std::string_view kRunResultFormat = "takosumi-run-result";

// Member names. A Run bundle: source.pack, prior_state.env, plan.env. A result: report.json,
// log.txt, state.env, plan.env.
inline constexpr std::string_view kSourceMember = "source.pack";
std::string envelope_member(std::string_view artifact_kind);  // "prior_state" → "prior_state.env"
// A result's member for an uploaded artifact: the envelopes as envelope_member, the plan view
// (redacted JSON, protocol/plan_view.hpp) as kPlanViewMember.
inline constexpr std::string_view kPlanViewMember = "plan_view.json";
std::string artifact_member(std::string_view artifact_kind);
const std::vector<std::string>& run_bundle_members();
const std::vector<std::string>& run_result_members();

// The id an offline agent has: derived from its signing key, so the agent knows it without ever
// talking to the control plane, and a bundle addressed to another agent is refused as such.
// "agt_" and 32 hex digits, the form of every agent id.
std::string offline_agent_id(std::string_view sign_public_key_base64);

struct RunBundleIndex {
  std::string run_id;
  std::string lease_token;
  std::int64_t lease_expires_at = 0;
  SignedManifest manifest;
  std::vector<BundleMember> members;
};
std::string to_text(const RunBundleIndex& index);
// bundle_invalid for anything else.
Result<RunBundleIndex> run_bundle_index_from_text(std::string_view text);

struct RunResultIndex {
  std::string run_id;
  std::int64_t attempt = 0;
  std::string agent_id;
  std::string lease_token;
  std::vector<BundleMember> members;
};
// The signed document's text: the agent's signature over the whole index.
std::string sign_run_result(const RunResultIndex& index, const crypto::SignKeyPair& key);
// Whose result it says it is (its Run and agent), read without trusting it: the caller looks that
// agent's key up and passes it to open_run_result. bundle_invalid when it says nothing.
struct RunResultClaim {
  std::string run_id;
  std::string agent_id;
};
Result<RunResultClaim> peek_run_result(std::string_view text);
// The index when `trusted` signed exactly this text. bundle_invalid or bundle_signature_invalid.
Result<RunResultIndex> open_run_result(std::string_view text, const crypto::SignPublicKey& trusted);

}  // namespace takosumi::protocol
