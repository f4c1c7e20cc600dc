// The Git helper and the source caches with real repositories, real sockets and the real helper
// process (takosumi-githelper, the same code the daemons run as themselves).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "common/encoding.hpp"
#include "git/remote_failure.hpp"
#include "git/remote_helper.hpp"
#include "git/remote_ops.hpp"
#include "git/source_cache.hpp"
#include "common/failure_codes.hpp"
#include "tests/support/git_https_server.hpp"
#include "tests/support/git_ssh_server.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::git {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using takosumi::testing::TempDir;
using takosumi::testing::TestGitRepo;

const fs::path kHelper = test_paths::githelper;

// A TCP socket on loopback that listens; with answer_after_accept, a thread accepts each
// connection and writes `answer` (then closes). Without, the kernel completes connections into
// the backlog and nobody ever answers.
class Listener {
 public:
  explicit Listener(std::string answer = {}) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (!answer.empty())
      thread_ = std::thread([this, answer] {
        for (;;) {
          const int c = ::accept(fd_, nullptr, nullptr);
          if (c < 0) return;
          ++accepted_;
          (void)!::write(c, answer.data(), answer.size());
          ::close(c);
        }
      });
  }
  ~Listener() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  std::atomic<int> accepted_{0};
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// A port nothing listens on (bound, then closed).
int closed_port() {
  Listener l;
  return l.port();
}

// The servers of these tests listen on loopback, which sources may reach only when allowed.
Result<HelperOutcome> list(const std::string& url, std::chrono::milliseconds within = 20s,
                           const std::function<bool()>& cancelled = {}, bool allow_internal = true) {
  return run_git_helper(kHelper, RemoteRequest{RemoteOp::list_refs, url, {}, {}, 0, std::nullopt, allow_internal},
                        std::chrono::steady_clock::now() + within, cancelled);
}

std::string told(const HelperOutcome& outcome) {
  auto status = remote_status(outcome, RemoteContext{"list refs", 5s, "sources.resolveTimeoutSeconds",
                                                     "source.maxFetchMiB"});
  return status ? "" : status.error().to_string();
}

TEST(GitHelper, ListsTheRefsOfARepository) {
  TempDir dir;
  TestGitRepo repo(dir / "repo");
  const auto main = repo.commit({{"main.tf", "# a"}});
  const auto tag = repo.commit({{"main.tf", "# b"}}, "refs/tags/v1");
  auto outcome = list(repo.url());
  ASSERT_TRUE(outcome) << outcome.error().to_string();
  ASSERT_FALSE(outcome->result.failure) << outcome->result.detail;
  EXPECT_EQ(outcome->result.refs.at("refs/heads/main"), main);
  EXPECT_EQ(outcome->result.refs.at("refs/tags/v1"), tag);
}

TEST(GitHelper, AServerThatNeverAnswersCostsOnlyTheDeadline) {
  Listener silent;
  auto outcome = list("https://127.0.0.1:" + std::to_string(silent.port()) + "/repo.git", 1500ms);
  ASSERT_TRUE(outcome) << outcome.error().to_string();
  EXPECT_TRUE(outcome->timed_out);
  EXPECT_NE(told(*outcome).find("source_fetch_failed: list refs: no answer within 5 s "
                                "(sources.resolveTimeoutSeconds)"),
            std::string::npos)
      << told(*outcome);
}

TEST(GitHelper, ACancelEndsTheWaitAtOnce) {
  Listener silent;
  auto outcome = list("https://127.0.0.1:" + std::to_string(silent.port()) + "/repo.git", 600s,
                      [] { return true; });
  ASSERT_TRUE(outcome) << outcome.error().to_string();
  EXPECT_TRUE(outcome->cancelled);
}

TEST(GitHelper, AClosedPortAndAWebServerThatIsNoGitServerReadAlike) {
  Listener web("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  // Over https the plain web server fails the handshake; over ssh it is no SSH server.
  for (const std::string scheme : {"https", "ssh"}) {
    auto refused = list(scheme + "://127.0.0.1:" + std::to_string(closed_port()) + "/repo.git");
    auto answered = list(scheme + "://127.0.0.1:" + std::to_string(web.port()) + "/repo.git");
    ASSERT_TRUE(refused) << refused.error().to_string();
    ASSERT_TRUE(answered) << answered.error().to_string();
    ASSERT_TRUE(refused->result.failure);
    ASSERT_TRUE(answered->result.failure);
    EXPECT_EQ(told(*refused), told(*answered)) << refused->result.detail << " / " << answered->result.detail;
    EXPECT_EQ(told(*refused).find("refused"), std::string::npos) << told(*refused);
  }
}

// Checked where libgit2 dials, over https (beneath TLS) and ssh (beneath libssh2) alike: the
// address a name resolves to decides, so no spelling of a URL, DNS answer or redirect reaches the
// machine itself. The server is never contacted.
TEST(GitHelper, AnInternalAddressIsRefusedWhereItIsDialled) {
  Listener web("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  for (const std::string& url : {"https://127.0.0.1:" + std::to_string(web.port()) + "/repo.git",
                                "https://localhost:" + std::to_string(web.port()) + "/repo.git",
                                "ssh://git@127.0.0.1:" + std::to_string(web.port()) + "/repo.git"}) {
    auto outcome = list(url, 20s, {}, false);
    ASSERT_TRUE(outcome) << outcome.error().to_string();
    ASSERT_TRUE(outcome->result.failure) << url;
    EXPECT_EQ(*outcome->result.failure, RemoteFailure::denied) << url << ": " << outcome->result.detail;
    auto status = remote_status(*outcome, RemoteContext{"list refs", 5s, "sources.resolveTimeoutSeconds",
                                                        "sources.maxFetchMiB", "sources.allowLoopbackHosts"});
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, errc::kSourceDenied);
    EXPECT_NE(status.error().message.find("(sources.allowLoopbackHosts allows it)"), std::string::npos)
        << status.error().message;
  }
  EXPECT_EQ(web.accepted(), 0) << "a refused address was connected to";
  // Control: the same server, allowed, is reached.
  auto allowed = list("https://127.0.0.1:" + std::to_string(web.port()) + "/repo.git");
  ASSERT_TRUE(allowed) << allowed.error().to_string();
  EXPECT_NE(allowed->result.failure, RemoteFailure::denied);
  EXPECT_GT(web.accepted(), 0);
}

TEST(GitHelper, ABrokenHelperIsUnavailableNotAHang) {
  TempDir dir;
  auto outcome = run_git_helper("/bin/false", RemoteRequest{}, std::chrono::steady_clock::now() + 20s);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code, "unavailable");
}

TEST(RemoteRequest, RoundTripsWithItsCredential) {
  RemoteRequest r{RemoteOp::fetch, "https://h/r.git", "/cache/x.git", "/etc/ca.pem", 7, std::nullopt};
  protocol::GitCredential c;
  c.connection_id = "conn_1";
  c.username = "oauth2";
  c.token = SecretBytes::from_string("tok-123456");
  r.credential = std::move(c);
  auto text = serialize_remote_request(r);
  auto back = parse_remote_request(text.reveal_as_string());
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->op, RemoteOp::fetch);
  EXPECT_EQ(back->repository, "/cache/x.git");
  EXPECT_EQ(back->max_bytes, 7u);
  ASSERT_TRUE(back->credential);
  EXPECT_EQ(back->credential->token.reveal_as_string(), "tok-123456");
  EXPECT_EQ(back->credential->username, "oauth2");
}

std::string hashed_name(const std::string& name, const std::string& salt) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha1(), salt.data(), static_cast<int>(salt.size()),
       reinterpret_cast<const unsigned char*>(name.data()), name.size(), mac, &len);
  return "|1|" + base64_encode(std::span(reinterpret_cast<const std::uint8_t*>(salt.data()), salt.size())) +
         "|" + base64_encode(std::span(mac, len));
}

TEST(KnownHosts, AKeyMatchesOnlyForItsHostAndPort) {
  const std::string key = "key-blob-bytes";
  const std::string other = "another-key";
  const std::string b64 = base64_encode(std::span(reinterpret_cast<const std::uint8_t*>(key.data()), key.size()));
  const std::string hosts = "# comment\n"
                            "git.example.com,10.0.0.1 ssh-ed25519 " + b64 + "\n"
                            "[git.example.com]:2222 ssh-ed25519 " + b64 + "\n" +
                            hashed_name("hidden.example.com", "0123456789abcdefghij") +
                            " ssh-ed25519 " + b64 + "\n"
                            "@revoked evil.example.com ssh-ed25519 " + b64 + "\n";
  EXPECT_TRUE(known_host_key(hosts, "git.example.com", 22, key));
  EXPECT_TRUE(known_host_key(hosts, "Git.Example.COM", 22, key)) << "host names match in any case";
  EXPECT_TRUE(known_host_key(hosts, "10.0.0.1", 22, key));
  EXPECT_TRUE(known_host_key(hosts, "git.example.com", 2222, key));
  EXPECT_TRUE(known_host_key(hosts, "hidden.example.com", 22, key));
  EXPECT_FALSE(known_host_key(hosts, "git.example.com", 22, other));
  EXPECT_FALSE(known_host_key(hosts, "git.example.com", 2223, key));
  EXPECT_FALSE(known_host_key(hosts, "evil.example.com", 22, key));
  EXPECT_FALSE(known_host_key(hosts, "example.com", 22, key));
}

class SourceCacheTest : public ::testing::Test {
 protected:
  FetchSettings settings() const {
    FetchSettings s;
    s.helper = kHelper;
    s.timeout = 60s;
    s.allow_internal_hosts = true;  // the servers listen on loopback
    return s;
  }
  TempDir dir_;
  TestGitRepo repo_{dir_ / "repo"};
};

TEST_F(SourceCacheTest, EachWorkspaceHasItsOwnCacheOfAUrl) {
  EXPECT_NE(cache_repository_path(dir_ / "cache", "ws_a", repo_.url()),
            cache_repository_path(dir_ / "cache", "ws_b", repo_.url()));
  const auto id = repo_.commit({{"main.tf", "# a"}});
  auto cache = SourceCache::open(dir_ / "cache", "ws_a", repo_.url());
  ASSERT_TRUE(cache) << cache.error().to_string();
  auto commit = cache->fetch_commit(id, std::nullopt, settings());
  ASSERT_TRUE(commit) << commit.error().to_string();
  EXPECT_TRUE(fs::is_directory(cache_repository_path(dir_ / "cache", "ws_a", repo_.url())));
  EXPECT_FALSE(fs::exists(cache_repository_path(dir_ / "cache", "ws_b", repo_.url())));
}

TEST_F(SourceCacheTest, ACommitNoRefReachesIsMissing) {
  repo_.commit({{"main.tf", "# a"}});
  const auto lost = repo_.dangling_commit({{"main.tf", "# lost"}});
  auto cache = SourceCache::open(dir_ / "cache", "ws_a", repo_.url());
  ASSERT_TRUE(cache);
  auto commit = cache->fetch_commit(lost, std::nullopt, settings());
  ASSERT_FALSE(commit);
  EXPECT_EQ(commit.error().code, errc::kSourceCommitMissing) << commit.error().to_string();
}

// Over the network, with git's own server: a token only from the Connection, the operator's CA,
// and a size limit on what is received.
class HttpsSourceTest : public SourceCacheTest {
 protected:
  HttpsSourceTest() { ca_.write_cert(dir_ / "ca.pem"); }
  FetchSettings https_settings() const {
    auto s = settings();
    s.ca_file = dir_ / "ca.pem";
    return s;
  }
  static protocol::GitCredential token(const std::string& value) {
    protocol::GitCredential c;
    c.connection_id = "conn_git";
    c.username = "x-access-token";
    c.token = SecretBytes::from_string(value);
    return c;
  }
  Result<Commit> fetch(const std::string& commit, const std::optional<protocol::GitCredential>& credential,
                       const FetchSettings& s) {
    auto cache = SourceCache::open(dir_ / "cache", "ws_a", server_.url("repo"));
    if (!cache) return std::unexpected(cache.error());
    return cache->fetch_commit(commit, credential, s);
  }
  takosumi::testing::TestCa ca_{"git-ca"};
  takosumi::testing::GitHttpsServer server_{ca_, dir_.path(), "tok-3141592653"};
};

TEST_F(HttpsSourceTest, APrivateRepositoryIsReadWithTheConnectionsTokenOnly) {
  const auto id = repo_.commit({{"main.tf", "# private"}});
  auto anonymous = fetch(id, std::nullopt, https_settings());
  ASSERT_FALSE(anonymous);
  EXPECT_NE(anonymous.error().message.find("asked for credentials or refused them"), std::string::npos)
      << anonymous.error().to_string();
  auto wrong = fetch(id, token("tok-wrong-000000"), https_settings());
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("Connection of kind git"), std::string::npos) << wrong.error().to_string();
  EXPECT_EQ(wrong.error().message.find("tok-wrong"), std::string::npos) << wrong.error().to_string();
  auto fetched = fetch(id, token("tok-3141592653"), https_settings());
  ASSERT_TRUE(fetched) << fetched.error().to_string();
  EXPECT_GT(server_.refused(), 0);
}

TEST_F(HttpsSourceTest, AServerCertificateOfAnUnknownCaIsNotTrusted) {
  const auto id = repo_.commit({{"main.tf", "# private"}});
  auto r = fetch(id, token("tok-3141592653"), settings());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no Git repository answered there"), std::string::npos) << r.error().to_string();
}

TEST_F(HttpsSourceTest, AFetchLargerThanTheLimitIsRefused) {
  // Incompressible: a pack holds it at nearly its size.
  std::string big(1 << 20, '\0');
  std::uint32_t x = 2463534242u;
  for (char& c : big) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    c = static_cast<char>(x);
  }
  const auto id = repo_.commit({{"big.bin", big}});
  auto cache = SourceCache::open(dir_ / "cache", "ws_a", server_.url("repo"));
  ASSERT_TRUE(cache);
  auto s = https_settings();
  s.max_bytes = 64 * 1024;
  auto commit = cache->fetch_commit(id, token("tok-3141592653"), s);
  ASSERT_FALSE(commit);
  EXPECT_NE(commit.error().message.find("larger than source.maxFetchMiB allows"), std::string::npos)
      << commit.error().to_string();
}

// A helper killed at its deadline leaves a half-received pack and ref locks; the next open of the
// cache (under its lock) removes them, so they neither fill the disk nor fail later fetches.
TEST_F(SourceCacheTest, WhatAKilledFetchLeftBehindIsRemovedWhenTheCacheIsOpened) {
  const fs::path repo = cache_repository_path(dir_ / "cache", "ws_a", repo_.url());
  { ASSERT_TRUE(SourceCache::open(dir_ / "cache", "ws_a", repo_.url())); }
  std::ofstream(repo / "objects/pack/pack_git2_1a2b3c") << std::string(4096, 'x');
  fs::create_directories(repo / "refs/heads");
  std::ofstream(repo / "refs/heads/main.lock") << "";
  std::ofstream(repo / "packed-refs.lock") << "";
  std::ofstream(repo / "FETCH_HEAD.lock") << "";
  std::ofstream(repo / "objects/pack/pack-1a2b3c.idx.lock") << "";
  auto cache = SourceCache::open(dir_ / "cache", "ws_a", repo_.url());
  ASSERT_TRUE(cache) << cache.error().to_string();
  for (const char* left : {"objects/pack/pack_git2_1a2b3c", "refs/heads/main.lock", "packed-refs.lock",
                           "FETCH_HEAD.lock", "objects/pack/pack-1a2b3c.idx.lock"})
    EXPECT_FALSE(fs::exists(repo / left)) << left;
  const auto id = repo_.commit({{"main.tf", "# after"}});
  EXPECT_TRUE(cache->fetch_commit(id, std::nullopt, settings()));
}

TEST_F(SourceCacheTest, CachesMadeBeforeWorkspaceKeysAreRemoved) {
  fs::create_directories(dir_ / "cache/0123456789abcdef.git/objects");
  std::ofstream(dir_ / "cache/0123456789abcdef.git.lock") << "";
  fs::create_directories(dir_ / "cache/fedcba9876543210/0123456789abcdef.git");
  remove_unkeyed_caches(dir_ / "cache");
  EXPECT_FALSE(fs::exists(dir_ / "cache/0123456789abcdef.git"));
  EXPECT_FALSE(fs::exists(dir_ / "cache/0123456789abcdef.git.lock"));
  EXPECT_TRUE(fs::exists(dir_ / "cache/fedcba9876543210/0123456789abcdef.git"));
}

// Over SSH, with OpenSSH's own sshd: the Connection's key authenticates, and the server must
// present a host key SSH_KNOWN_HOSTS lists (no trust on first use).
class SshSourceTest : public SourceCacheTest {
 protected:
  protocol::GitCredential key(const std::string& known_hosts) const {
    protocol::GitCredential c;
    c.connection_id = "conn_ssh";
    c.username = "git";
    c.private_key = SecretBytes::from_string(sshd_.client_private_key());
    c.known_hosts = known_hosts;
    return c;
  }
  Result<Commit> fetch(const std::string& commit, const std::optional<protocol::GitCredential>& credential) {
    auto cache = SourceCache::open(dir_ / "cache", "ws_a", sshd_.url(repo_.path()));
    if (!cache) return std::unexpected(cache.error());
    return cache->fetch_commit(commit, credential, settings());
  }
  takosumi::testing::GitSshServer sshd_{dir_ / "sshd"};
};

TEST_F(SshSourceTest, TheKeyAuthenticatesAndOnlyAListedHostKeyIsAccepted) {
  const auto id = repo_.commit({{"main.tf", "# over ssh"}});
  auto fetched = fetch(id, key(sshd_.known_hosts_line()));
  ASSERT_TRUE(fetched) << fetched.error().to_string();
  auto impostor = fetch(id, key(sshd_.wrong_known_hosts_line()));
  ASSERT_FALSE(impostor);
  EXPECT_NE(impostor.error().message.find("host key is not among SSH_KNOWN_HOSTS"), std::string::npos)
      << impostor.error().to_string();
  auto anonymous = fetch(id, std::nullopt);
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().code, errc::kSourceFetchFailed) << anonymous.error().to_string();
}

}  // namespace
}  // namespace takosumi::git