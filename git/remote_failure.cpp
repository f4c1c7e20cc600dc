#include "git/remote_failure.hpp"

#include "common/failure_codes.hpp"
#include "protocol/host_address.hpp"

namespace takosumi::git {

Status remote_status(const HelperOutcome& outcome, const RemoteContext& c) {
  const std::string what(c.what);
  if (outcome.cancelled) return fail(errc::kCancelled, what + ": cancelled");
  if (outcome.timed_out)
    return fail(errc::kSourceFetchFailed, what + ": no answer within " + std::to_string(c.timeout.count()) +
                                              " s (" + std::string(c.timeout_setting) + ")");
  if (!outcome.result.failure) return {};
  std::string why;
  switch (*outcome.result.failure) {
    case RemoteFailure::auth:
      why = "the repository asked for credentials or refused them: give the Capsule a Connection of "
            "kind git (source.connection) that may read it";
      break;
    case RemoteFailure::host_key:
      why = "the SSH server's host key is not among SSH_KNOWN_HOSTS of the Capsule's Connection of "
            "kind git (ssh-keyscan prints the keys to check and add)";
      break;
    case RemoteFailure::unreachable:
      why = "no Git repository answered there: the host did not answer as a Git server, its TLS "
            "certificate is not trusted, or the repository does not exist";
      break;
    case RemoteFailure::too_large:
      why = "the repository is larger than " + std::string(c.size_setting) + " allows";
      break;
    case RemoteFailure::local:
      // Only a repository under the operator's file roots gets here: its own words are safe.
      why = outcome.result.detail;
      break;
    case RemoteFailure::helper:
      why = "the Git helper failed (see the log)";
      break;
    case RemoteFailure::denied:
      // What a resolver would tell anyone: nothing about this host.
      return fail(errc::kSourceDenied,
                  what + ": the host resolves to " + std::string(protocol::kInternalAddressWords) +
                      ", which sources may not reach (" + std::string(c.internal_setting) + " allows it)");
  }
  return fail(errc::kSourceFetchFailed, what + ": " + why);
}

}  // namespace takosumi::git
