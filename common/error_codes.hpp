#pragma once
// Stable error codes. These strings are part of the public API (HTTP error bodies, Run failure
// codes, logs); never rename one — add a new one instead.
#include <string_view>

namespace takosumi::errc {

// Generic / edge
inline constexpr std::string_view kInvalidArgument = "invalid_argument";
inline constexpr std::string_view kNotFound = "not_found";
inline constexpr std::string_view kConflict = "conflict";
inline constexpr std::string_view kUnauthorized = "unauthorized";
inline constexpr std::string_view kForbidden = "forbidden";
inline constexpr std::string_view kPayloadTooLarge = "payload_too_large";
inline constexpr std::string_view kIoError = "io_error";
inline constexpr std::string_view kInternal = "internal";
inline constexpr std::string_view kUnavailable = "unavailable";
inline constexpr std::string_view kConfigInvalid = "config_invalid";
inline constexpr std::string_view kProtocolError = "protocol_error";

// Keys and crypto
inline constexpr std::string_view kKeyFileInsecure = "key_file_insecure";
inline constexpr std::string_view kKeyFileInvalid = "key_file_invalid";
inline constexpr std::string_view kEnvelopeTruncated = "envelope_truncated";
inline constexpr std::string_view kEnvelopeTampered = "envelope_tampered";
inline constexpr std::string_view kEnvelopeWrongKey = "envelope_wrong_key";
inline constexpr std::string_view kEnvelopeHeaderMismatch = "envelope_header_mismatch";
inline constexpr std::string_view kEnvelopeMalformed = "envelope_malformed";
inline constexpr std::string_view kCryptoFailed = "crypto_failed";

// Manifests
inline constexpr std::string_view kManifestInvalid = "manifest_invalid";
inline constexpr std::string_view kManifestBadSignature = "manifest_bad_signature";
inline constexpr std::string_view kManifestExpired = "manifest_expired";
inline constexpr std::string_view kManifestWrongAgent = "manifest_wrong_agent";
inline constexpr std::string_view kManifestReplayed = "manifest_replayed";

// Run failure codes (ARCHITECTURE §6)
inline constexpr std::string_view kSourceFetchFailed = "source_fetch_failed";
inline constexpr std::string_view kSourceCommitMissing = "source_commit_missing";
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
// A mapped Output whose value looks like a credential is not published; a required one fails.
inline constexpr std::string_view kOutputRefused = "output_refused";
inline constexpr std::string_view kProviderPolicyDenied = "provider_policy_denied";
inline constexpr std::string_view kProvisionerDenied = "provisioner_denied";
inline constexpr std::string_view kExternalDataDenied = "external_data_denied";
// A module's own `terraform { encryption }` block: refused whatever the policy.
inline constexpr std::string_view kEncryptionConfigDenied = "encryption_config_denied";
// A module override file with a backend or cloud block, which would replace the agent's local
// backend (the state would leave the agent): refused whatever the policy.
inline constexpr std::string_view kBackendConfigDenied = "backend_config_denied";

// Connections
inline constexpr std::string_view kConnectionRevoked = "connection_revoked";
inline constexpr std::string_view kConnectionExpired = "connection_expired";

// Agent registration (docs/protocol.md "Register")
// 401: the challenge is unknown, already used, expired or fetched with another pool token.
inline constexpr std::string_view kRegistrationChallengeInvalid = "registration_challenge_invalid";
// 401: the registration signature does not verify with the presented signing key.
inline constexpr std::string_view kRegistrationSignatureInvalid = "registration_signature_invalid";
// 409: the name is registered with another signing key and no operator reset allows a new one.
inline constexpr std::string_view kAgentKeyMismatch = "agent_key_mismatch";

}  // namespace takosumi::errc
