#pragma once
// What a Capsule's source is fetched with when the repository is private: a Connection of kind
// git (docs/protocol.md "Connections of kind git"), never credentials in the URL. Its values are
// either an https token — TOKEN, with USERNAME ("x-access-token" when absent; GitLab wants
// "oauth2") — or an SSH key — SSH_PRIVATE_KEY (unencrypted, OpenSSH or PEM) with SSH_KNOWN_HOSTS
// (the host keys the server may present, as OpenSSH's known_hosts lines) and USERNAME ("git" when
// absent). The values are used by the fetch alone (the control plane's ref listing, the agent's
// checkout): tofu never sees them.
#include <map>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"

namespace takosumi::protocol {

inline constexpr std::string_view kGitToken = "TOKEN";
inline constexpr std::string_view kGitUsername = "USERNAME";
inline constexpr std::string_view kGitSshPrivateKey = "SSH_PRIVATE_KEY";
inline constexpr std::string_view kGitSshKnownHosts = "SSH_KNOWN_HOSTS";

struct GitCredential {
  std::string connection_id;
  std::string username;
  SecretBytes token;        // https
  SecretBytes private_key;  // ssh
  std::string known_hosts;  // ssh: not secret, but it travels with the key

  bool is_ssh() const { return !private_key.empty(); }
  GitCredential clone() const {
    return GitCredential{connection_id, username, token.clone(), private_key.clone(), known_hosts};
  }
};

// The values of a Connection of kind git, checked: TOKEN or SSH_PRIVATE_KEY with SSH_KNOWN_HOSTS,
// an optional USERNAME, nothing else. invalid_argument naming what is missing or extra (never a
// value).
Status validate_git_values(const std::map<std::string, SecretBytes>& values);
Result<GitCredential> git_credential_from_values(std::string connection_id,
                                                 const std::map<std::string, SecretBytes>& values);

}  // namespace takosumi::protocol
