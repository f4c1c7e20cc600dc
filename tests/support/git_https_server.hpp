#pragma once
// Test-only: real Git repositories served over HTTPS on loopback, by git's own smart-HTTP server
// (git http-backend, run as a CGI program per request) behind an OpenSSL listener with a
// certificate of a TestCa for localhost (libgit2 with mbedTLS matches names, not IP addresses). With a token, every request must carry
// Basic credentials whose password is the token (as GitHub, GitLab and Gitea take tokens), or it
// is answered 401. One thread, one connection at a time.
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "tests/support/test_pki.hpp"

namespace takosumi::testing {

class GitHttpsServer {
 public:
  // Serves the repositories under `root` (a repository at root/<name> is https://…/<name>).
  GitHttpsServer(const TestCa& ca, std::filesystem::path root, std::string token = {});
  ~GitHttpsServer();
  GitHttpsServer(const GitHttpsServer&) = delete;
  GitHttpsServer& operator=(const GitHttpsServer&) = delete;

  std::string url(const std::string& name) const;
  int port() const { return port_; }
  int requests() const { return requests_.load(); }
  int refused() const { return refused_.load(); }  // answered 401

 private:
  void serve();
  void handle(int fd);

  std::filesystem::path root_;
  std::string token_;
  struct Tls;
  std::unique_ptr<Tls> tls_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::atomic<int> refused_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace takosumi::testing
