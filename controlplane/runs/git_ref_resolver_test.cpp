#include "controlplane/runs/git_ref_resolver.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <string>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "tests/support/run_to_end.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::controlplane {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using takosumi::testing::TempDir;
using takosumi::testing::TestGitRepo;

// A loopback port the kernel accepts connections on (into the backlog) and nobody ever answers.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/repo.git"; }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A real repository on branch "main" with one commit, a branch "feature" with a second commit,
// a lightweight tag "v1" and an annotated tag "v1-annotated" on the first commit.
class GitRefResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    main_commit_ = repo_.commit({{"main.tf", "# one\n"}});
    repo_.set_ref("refs/heads/feature", main_commit_);
    feature_commit_ = repo_.commit({{"main.tf", "# two\n"}}, "refs/heads/feature");
    repo_.set_ref("refs/tags/v1", main_commit_);
    repo_.annotated_tag("v1-annotated", main_commit_);
  }

  static RefResolverSettings settings(const TempDir& dir) {
    RefResolverSettings s;
    s.helper = test_paths::githelper;
    s.rules.file_roots = {dir.path()};
    s.rules.private_dirs = {dir.path() / "data"};
    s.rules.allow_internal_hosts = true;  // the test servers listen on loopback
    s.timeout = 2s;
    return s;
  }
  Result<std::string> resolve(const std::string& url, const std::string& ref,
                              const std::string& workspace = "ws_a") {
    return testing::run_to_end(io_, resolver_.async_resolve(workspace, url, ref, std::nullopt));
  }
  std::string url() const { return repo_.url(); }

  TempDir dir_;
  TestGitRepo repo_{dir_.path() / "repo"};
  std::string main_commit_;
  std::string feature_commit_;
  asio::io_context io_;
  GitRefResolver resolver_{settings(dir_)};
};

TEST_F(GitRefResolverTest, ResolvesBranchesAndHead) {
  EXPECT_EQ(resolve(url(), "main").value_or("?"), main_commit_);
  EXPECT_EQ(resolve(url(), "HEAD").value_or("?"), main_commit_);
  EXPECT_EQ(resolve(url(), "feature").value_or("?"), feature_commit_);
  EXPECT_EQ(resolve(url(), "refs/heads/feature").value_or("?"), feature_commit_);
  EXPECT_NE(main_commit_, feature_commit_);
}

TEST_F(GitRefResolverTest, ResolvesTagsToCommits) {
  EXPECT_EQ(resolve(url(), "v1").value_or("?"), main_commit_);
  EXPECT_EQ(resolve(url(), "v1-annotated").value_or("?"), main_commit_);
}

TEST_F(GitRefResolverTest, TakesA40HexRefAsTheCommit) {
  const std::string upper = "ABCDEF0123456789ABCDEF0123456789ABCDEF01";
  EXPECT_EQ(resolve("https://git.example.com/x.git", upper).value_or("?"),
            "abcdef0123456789abcdef0123456789abcdef01");
}

TEST_F(GitRefResolverTest, UnknownRefIsAClearError) {
  auto r = resolve(url(), "no-such-branch");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kInvalidArgument);
  EXPECT_NE(r.error().message.find("no branch, tag or HEAD named \"no-such-branch\""),
            std::string::npos)
      << r.error().message;
}

// Paths outside the roots, the control plane's own data, bare paths, other schemes: refused
// before anything is read, in words that do not depend on what the path holds.
TEST_F(GitRefResolverTest, OnlyAllowedSourcesAreRead) {
  std::filesystem::create_directories(dir_ / "data/git-cache");
  for (const std::string& bad : std::vector<std::string>{"file:///etc", "file:///nonexistent", (dir_ / "repo").string(),
                                "file://" + (dir_ / "data/git-cache").string(),
                                "http://127.0.0.1:1/x.git", "git://127.0.0.1/x.git"}) {
    auto r = resolve(bad, "main");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, errc::kSourceDenied) << bad << ": " << r.error().to_string();
  }
  auto etc = resolve("file:///etc", "main");
  auto nothing = resolve("file:///nonexistent", "main");
  EXPECT_EQ(etc.error().message.substr(etc.error().message.find(" is not under")),
            nothing.error().message.substr(nothing.error().message.find(" is not under")));
}

// By default a gitUrl cannot make the control plane connect to the machine itself or a metadata
// service: named literally it is refused by the URL check, and nothing reaches the listener.
TEST_F(GitRefResolverTest, ALoopbackHostIsRefusedUnlessTheOperatorAllowsIt) {
  SilentListener silent;
  auto defaults = settings(dir_);
  defaults.rules.allow_internal_hosts = false;
  GitRefResolver strict(defaults);
  for (const char* host : {"127.0.0.1", "localhost", "[::1]"}) {
    const std::string url = std::string("https://") + host + ":" + std::to_string(silent.port()) + "/repo.git";
    auto r = testing::run_to_end(io_, strict.async_resolve("ws_a", url, "main", std::nullopt));
    ASSERT_FALSE(r) << url;
    EXPECT_EQ(r.error().code, errc::kSourceDenied) << r.error().to_string();
    EXPECT_NE(r.error().message.find("sources.allowLoopbackHosts"), std::string::npos) << r.error().message;
  }
}

TEST_F(GitRefResolverTest, UnreachableRepositoryIsAFetchFailure) {
  auto r = resolve("file://" + (dir_ / "missing").string(), "main");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kSourceFetchFailed);
  EXPECT_NE(r.error().message.find("resolve ref \"main\""), std::string::npos) << r.error().message;
}

// A remote that never answers ends at the deadline, and while it hangs the Workspace can start
// only as many resolutions as its limit: another Workspace's still go through at once.
TEST_F(GitRefResolverTest, AHungRemoteHoldsOnlyItsWorkspacesSlotsUntilTheDeadline) {
  SilentListener silent;
  std::vector<Result<std::string>> hung(2);
  int done = 0;
  for (auto& slot : hung)
    asio::co_spawn(io_, resolver_.async_resolve("ws_hostile", silent.url(), "main", std::nullopt),
                   [&](std::exception_ptr, Result<std::string> r) { slot = std::move(r); ++done; });
  // While both are in flight: a third of that Workspace is refused at once; another tenant's works.
  Result<std::string> third, other;
  asio::co_spawn(io_, [&]() -> asio::awaitable<void> {
    third = co_await resolver_.async_resolve("ws_hostile", silent.url(), "main", std::nullopt);
    other = co_await resolver_.async_resolve("ws_b", url(), "main", std::nullopt);
  }, asio::detached);
  io_.run();
  ASSERT_EQ(done, 2);
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, errc::kTooManyRequests) << third.error().to_string();
  EXPECT_EQ(other.value_or("?"), main_commit_);
  for (const auto& r : hung) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, errc::kSourceFetchFailed);
    EXPECT_NE(r.error().message.find("no answer within 2 s (sources.resolveTimeoutSeconds)"),
              std::string::npos)
        << r.error().message;
  }
  // The slots came back.
  EXPECT_EQ(resolve(url(), "main", "ws_hostile").value_or("?"), main_commit_);
}

}  // namespace
}  // namespace takosumi::controlplane
