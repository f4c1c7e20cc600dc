#pragma once
// The Run failure codes (ARCHITECTURE §6): the stable strings a failed Run carries as
// failure.code, in reports, the public API, the activity log and docs/operations.md. This header
// owns them; never rename one, add a new one instead. The generic codes of common/error_codes.hpp
// (internal, unavailable) may end a Run too, for faults no Run-level code names.
#include <string_view>

#include "common/error_codes.hpp"

namespace takosumi::errc {

// The agent refused the Run's manifest (docs/protocol.md "Complete": reported with attempt 0).
inline constexpr std::string_view kManifestInvalid = "manifest_invalid";
inline constexpr std::string_view kManifestBadSignature = "manifest_bad_signature";
inline constexpr std::string_view kManifestExpired = "manifest_expired";
inline constexpr std::string_view kManifestWrongAgent = "manifest_wrong_agent";
inline constexpr std::string_view kManifestReplayed = "manifest_replayed";

// What went wrong while the agent ran the Run.
inline constexpr std::string_view kSourceFetchFailed = "source_fetch_failed";
inline constexpr std::string_view kSourceCommitMissing = "source_commit_missing";
// The Capsule's source URL is not one this side accepts: a scheme other than https and ssh,
// credentials in the URL, or a local repository outside the operator's file roots
// (protocol/source_url.hpp). Also the API's answer when a Capsule names such a URL.
inline constexpr std::string_view kSourceDenied = "source_denied";
inline constexpr std::string_view kStateIntegrityFailed = "state_integrity_failed";
inline constexpr std::string_view kOpentofuInitFailed = "opentofu_init_failed";
inline constexpr std::string_view kOpentofuPlanFailed = "opentofu_plan_failed";
inline constexpr std::string_view kOpentofuFailed = "opentofu_failed";
inline constexpr std::string_view kApplyFailed = "apply_failed";
inline constexpr std::string_view kPlanDigestMismatch = "plan_digest_mismatch";
inline constexpr std::string_view kOutputRequiredMissing = "output_required_missing";
inline constexpr std::string_view kOutputTypeMismatch = "output_type_mismatch";
inline constexpr std::string_view kCancelled = "cancelled";
inline constexpr std::string_view kTimedOut = "timed_out";
inline constexpr std::string_view kLeaseLost = "lease_lost";
// The agent stopped (killed, crashed, host lost power) while it ran the Run; a restarted agent
// reported it, with whatever state tofu persisted (docs/operations.md).
inline constexpr std::string_view kInterrupted = "interrupted";
inline constexpr std::string_view kSandboxFailed = "sandbox_failed";
// A Run went past one of the agent's limits (plan JSON, state or input size).
inline constexpr std::string_view kLimitExceeded = "limit_exceeded";
inline constexpr std::string_view kWorkspaceFailed = "workspace_failed";
inline constexpr std::string_view kArtifactTransferFailed = "artifact_transfer_failed";
// The Run's results (its run report: resource changes, drift, data-loss marks) are larger than
// the control plane accepts (protocol::kMaxRunReportBytes); the Run ends at once, not retried.
inline constexpr std::string_view kResultTooLarge = "result_too_large";
// A mapped Output whose value looks like a credential is not published; a required one fails.
inline constexpr std::string_view kOutputRefused = "output_refused";
inline constexpr std::string_view kProviderPolicyDenied = "provider_policy_denied";
// A provider package in the mirror is not what the operator pinned (its h1:/zh: hash differs, it
// is not on the list, or it holds what no package may: a symlink, a device).
inline constexpr std::string_view kProviderChecksumMismatch = "provider_checksum_mismatch";
// An offline Run bundle's source is not the commit its manifest names: the pack does not hold it,
// does not have the manifest's digest, or the commit's tree is not the manifest's tree id.
inline constexpr std::string_view kSourceTreeMismatch = "source_tree_mismatch";
// No OpenTofu of the agent satisfies the Run's version constraints (the module's
// required_version, the Capsule's opentofuVersion): none in tofu.versionsDir, or the build chosen
// says it is another version. The message names the constraints and the versions there are.
inline constexpr std::string_view kOpentofuVersionUnavailable = "opentofu_version_unavailable";
inline constexpr std::string_view kProvisionerDenied = "provisioner_denied";
inline constexpr std::string_view kExternalDataDenied = "external_data_denied";
// The exec allowlist stopped a program a module started (a script of the checkout, a program
// sandbox.execAllow does not name); the message names it and says what can be done.
inline constexpr std::string_view kExecDenied = "exec_denied";
// A module's own `terraform { encryption }` block: refused whatever the policy.
inline constexpr std::string_view kEncryptionConfigDenied = "encryption_config_denied";
// A module override file with a backend or cloud block, which would replace the agent's local
// backend (the state would leave the agent): refused whatever the policy.
inline constexpr std::string_view kBackendConfigDenied = "backend_config_denied";
// An operator's pre-plan or pre-apply hook (hooks.*) exited non-zero or ran past its time.
inline constexpr std::string_view kHookFailed = "hook_failed";

// Set by the control plane when it refuses to dispatch a Run whose Connection cannot be used.
inline constexpr std::string_view kConnectionRevoked = "connection_revoked";
inline constexpr std::string_view kConnectionExpired = "connection_expired";
// Set by the control plane: a required input of a Dependency is not among the producer's public
// Outputs (not applied yet, or of another type) when the Run was claimed.
inline constexpr std::string_view kDependencyOutputMissing = "dependency_output_missing";
// Set by the control plane: a required input comes through an OutputShare that was revoked.
inline constexpr std::string_view kOutputShareRevoked = "output_share_revoked";
// Set by the control plane: a drift_check's pinned StateVersion was no longer current when it
// was claimed.
inline constexpr std::string_view kStateVersionSuperseded = "state_version_superseded";

}  // namespace takosumi::errc
