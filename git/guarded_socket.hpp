#pragma once
// The sockets libgit2 opens in the Git helper — for https (beneath its TLS), for ssh (beneath
// libssh2), for every redirect it follows — connect here, where the address actually dialled is
// checked (protocol/host_address.hpp): a name that resolves to loopback, a redirect to
// 169.254.169.254, a DNS answer that changed since the URL was checked, all meet the same rule.
// One helper process serves one request, so the rule is process-wide.
namespace takosumi::git {

// Registers the stream with libgit2 (after ensure_libgit2). allow_internal: sources.allowLoopbackHosts.
void guard_sockets(bool allow_internal);

// Whether a connection was refused by the rule since guard_sockets.
bool refused_internal_address();

}  // namespace takosumi::git
