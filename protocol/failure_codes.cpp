#include "protocol/failure_codes.hpp"

#include <algorithm>
#include <array>

namespace takosumi::protocol {

bool is_run_failure_code(std::string_view code) {
  static constexpr std::array kCodes{
      errc::kManifestInvalid,        errc::kManifestBadSignature,  errc::kManifestExpired,
      errc::kManifestWrongAgent,     errc::kManifestReplayed,      errc::kSourceFetchFailed,
      errc::kSourceCommitMissing,    errc::kSourceDenied,          errc::kStateIntegrityFailed,
      errc::kOpentofuInitFailed,
      errc::kOpentofuPlanFailed,     errc::kOpentofuFailed,        errc::kApplyFailed,
      errc::kPlanDigestMismatch,     errc::kOutputRequiredMissing, errc::kOutputTypeMismatch,
      errc::kCancelled,              errc::kTimedOut,              errc::kLeaseLost,
      errc::kInterrupted,            errc::kSandboxFailed,         errc::kLimitExceeded,
      errc::kWorkspaceFailed,        errc::kArtifactTransferFailed, errc::kResultTooLarge, errc::kOutputRefused,
      errc::kProviderPolicyDenied,   errc::kProvisionerDenied,     errc::kExternalDataDenied,    errc::kExecDenied,
      errc::kEncryptionConfigDenied, errc::kBackendConfigDenied,   errc::kHookFailed,
      errc::kProviderChecksumMismatch, errc::kSourceTreeMismatch, errc::kOpentofuVersionUnavailable,
      errc::kConnectionRevoked,
      errc::kConnectionExpired,      errc::kStateVersionSuperseded, errc::kDependencyOutputMissing,
      errc::kOutputShareRevoked,     errc::kInternal,               errc::kUnavailable};
  return std::find(kCodes.begin(), kCodes.end(), code) != kCodes.end();
}

Error as_run_failure(Error e, std::string_view fallback) {
  if (is_run_failure_code(e.code)) return e;
  return Error{std::string(fallback), e.code + ": " + e.message};
}

}  // namespace takosumi::protocol
