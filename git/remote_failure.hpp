#pragma once
// How a failed remote operation is told to whoever named the URL — a tenant, who must learn what
// the repository's server said and nothing about the host that asked: a refused connection, a
// timeout at connect, a web server's 404 and a missing repository read alike, so a gitUrl cannot
// probe which ports or paths exist. The helper's own words go to the operator's log instead.
#include <chrono>
#include <string_view>

#include "common/error.hpp"
#include "git/remote_helper.hpp"

namespace takosumi::git {

struct RemoteContext {
  std::string_view what;             // "list the refs of https://…"
  std::chrono::seconds timeout;      // the deadline the caller gave
  std::string_view timeout_setting;  // "sources.resolveTimeoutSeconds"
  std::string_view size_setting;     // "source.maxFetchMiB"
  std::string_view internal_setting = "source.allowLoopbackHosts";
};

// source_fetch_failed; source_denied when the host resolved to an address sources may not reach
// (git/guarded_socket.hpp); cancelled when the caller's cancel ended it; Status{} when the helper
// succeeded.
Status remote_status(const HelperOutcome& outcome, const RemoteContext& context);

}  // namespace takosumi::git
