#pragma once
// Test-only: Git repositories served over SSH on loopback by OpenSSH's own sshd (Debian's
// openssh-server), which runs git-upload-pack for a client key it was given: a host key and a
// client key made with ssh-keygen in `dir`, public-key authentication only. For the Git helper's
// SSH path: the key it authenticates with and the host key it must find in SSH_KNOWN_HOSTS.
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace takosumi::testing {

class GitSshServer {
 public:
  explicit GitSshServer(std::filesystem::path dir);
  ~GitSshServer();
  GitSshServer(const GitSshServer&) = delete;
  GitSshServer& operator=(const GitSshServer&) = delete;

  // ssh://<user>@127.0.0.1:<port><absolute repository path>
  std::string url(const std::filesystem::path& repository) const;
  std::string client_private_key() const;  // OpenSSH PEM text, unencrypted
  // The host's key as a known_hosts line ("[127.0.0.1]:<port> ssh-ed25519 AAAA…").
  std::string known_hosts_line() const;
  // Another key's line for the same host: what a man in the middle would present.
  std::string wrong_known_hosts_line() const;
  int port() const { return port_; }

 private:
  std::filesystem::path dir_;
  std::string user_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace takosumi::testing
