#pragma once
// The capabilities bubblewrap granted takosumi-confine for making mounts noexec (CAP_SYS_ADMIN,
// and CAP_SETPCAP to give them up for good) never reach tofu: every set is emptied, the bounding
// set included, and the securebits are locked so that not even a uid 0 inside the sandbox (an
// agent running as root) regains them on execve. Plain POSIX over the raw calls.
#include <expected>
#include <string>

namespace takosumi::confine {

// Irreversible. The error names the failed call.
std::expected<void, std::string> drop_all_capabilities();

}  // namespace takosumi::confine
