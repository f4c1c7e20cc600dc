#pragma once
// Stable error codes. These strings are part of the public API (HTTP error bodies, Run failure
// codes, logs); never rename one — add a new one instead.
#include <string_view>

namespace takosumi::errc {

// Generic / edge
inline constexpr std::string_view kInvalidArgument = "invalid_argument";
inline constexpr std::string_view kNotFound = "not_found";
// The path is known, the method is not one it takes (HTTP 405, with Allow).
inline constexpr std::string_view kMethodNotAllowed = "method_not_allowed";
inline constexpr std::string_view kConflict = "conflict";
inline constexpr std::string_view kUnauthorized = "unauthorized";
inline constexpr std::string_view kForbidden = "forbidden";
inline constexpr std::string_view kPayloadTooLarge = "payload_too_large";
inline constexpr std::string_view kIoError = "io_error";
inline constexpr std::string_view kInternal = "internal";
inline constexpr std::string_view kUnavailable = "unavailable";
inline constexpr std::string_view kConfigInvalid = "config_invalid";
inline constexpr std::string_view kProtocolError = "protocol_error";
// A TLS connection that cannot be made (net/tls_failure.hpp says which is which).
inline constexpr std::string_view kTlsHandshakeFailed = "tls_handshake_failed";
inline constexpr std::string_view kTlsCertificateInvalid = "tls_certificate_invalid";
inline constexpr std::string_view kTlsHostnameMismatch = "tls_hostname_mismatch";

// Keys and crypto
inline constexpr std::string_view kKeyFileInsecure = "key_file_insecure";
inline constexpr std::string_view kKeyFileInvalid = "key_file_invalid";
inline constexpr std::string_view kEnvelopeTruncated = "envelope_truncated";
inline constexpr std::string_view kEnvelopeTampered = "envelope_tampered";
inline constexpr std::string_view kEnvelopeWrongKey = "envelope_wrong_key";
inline constexpr std::string_view kEnvelopeHeaderMismatch = "envelope_header_mismatch";
inline constexpr std::string_view kEnvelopeMalformed = "envelope_malformed";
inline constexpr std::string_view kCryptoFailed = "crypto_failed";

// Run failure codes (ARCHITECTURE §6), and the manifest and Connection refusals a Run can end
// with, are owned by protocol/failure_codes.hpp.

// The control plane's API (the HTTP status each answers with is in http_types.cpp).
// 409: the plan marks data-bearing resources for delete/replace and the apply request did not
// send {"acceptDataLoss": true}.
inline constexpr std::string_view kDataLossNotAccepted = "data_loss_not_accepted";
// 409: the operation needs a StateVersion (drift check, destroy) and the Capsule has none.
inline constexpr std::string_view kNoStateVersion = "no_state_version";
// 431: the request's header section is larger than the server reads (16 KiB).
inline constexpr std::string_view kHeadersTooLarge = "headers_too_large";
// 429: a Workspace already has as many of this kind of request in flight as it may (ref
// resolutions: sources.maxResolutionsPerWorkspace); retry when they finish.
inline constexpr std::string_view kTooManyRequests = "too_many_requests";
// 503: streaming this body to disk would pass the server's budget of temporary bytes
// (maxTempMiB, shared by all requests); retry later.
inline constexpr std::string_view kTempSpaceExhausted = "temp_space_exhausted";

// 409: the Dependency would close a cycle of Capsules (docs/passing-values.md), named in the
// message.
inline constexpr std::string_view kDependencyCycle = "dependency_cycle";
// 400: a signed document (a Workspace backup) that is not one, or whose signature is not the
// given key's over its exact bytes.
inline constexpr std::string_view kBackupInvalid = "backup_invalid";
inline constexpr std::string_view kBackupSignatureInvalid = "backup_signature_invalid";
// 400: a file that should be an offline Run bundle or result (docs/air-gapped.md) is not one: bad
// framing, a member whose size or digest differs from its index, an unknown member.
inline constexpr std::string_view kBundleInvalid = "bundle_invalid";
// 400: a result bundle whose signature is not its agent's, or that names an agent this control
// plane has not registered offline.
inline constexpr std::string_view kBundleSignatureInvalid = "bundle_signature_invalid";

// Agent registration (docs/protocol.md "Register")
// 401: the challenge is unknown, already used, expired or fetched with another pool token.
inline constexpr std::string_view kRegistrationChallengeInvalid = "registration_challenge_invalid";
// 401: the registration signature does not verify with the presented signing key.
inline constexpr std::string_view kRegistrationSignatureInvalid = "registration_signature_invalid";
// 409: the name is registered with another signing key and no operator reset allows a new one.
inline constexpr std::string_view kAgentKeyMismatch = "agent_key_mismatch";
// 403: an operator revoked this agent (POST /api/v1/agents/{id}/revoke); the agent stops.
inline constexpr std::string_view kAgentRevoked = "agent_revoked";
// 401: the agent's credential is older than agentCredentialTtlSeconds; the agent registers again.
inline constexpr std::string_view kAgentCredentialExpired = "agent_credential_expired";
// 403: mutual TLS: the agent registered with another client certificate (subject or SAN).
inline constexpr std::string_view kAgentCertificateMismatch = "agent_certificate_mismatch";

}  // namespace takosumi::errc
