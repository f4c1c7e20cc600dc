#pragma once
// What the Git helper does, with libgit2, in its own process (git/helper_main.hpp): list a
// remote's refs, or fetch every branch and tag into a bare repository. No git configuration file
// is read (no insteadOf, proxy or sslVerify of the host's), an https token or SSH key comes only
// from the request's credential, and an SSH server must present a key its SSH_KNOWN_HOSTS lists:
// there is no trust on first use. Blocking, and without a timeout of its own: the asking process
// kills the helper at its deadline.
#include "git/remote_request.hpp"

namespace takosumi::git {

RemoteResult run_remote_request(const RemoteRequest& request);

// True when `known_hosts` (OpenSSH known_hosts lines, hashed host names included) lists `key`
// (the raw public key blob) for `host` at `port` ("[host]:port" when it is not 22).
bool known_host_key(std::string_view known_hosts, std::string_view host, int port,
                    std::string_view key);

}  // namespace takosumi::git
