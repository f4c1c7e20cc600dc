#include "runner/source/git_source.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <fstream>
#include <sstream>

#include "tests/support/run_to_end.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::TempDir;
using takosumi::testing::TestGitRepo;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class GitSourceTest : public ::testing::Test {
 protected:
  protocol::SourceSpec spec(std::string commit, std::string module = "") {
    return {repo_.url(), std::move(commit), std::move(module)};
  }
  Result<CheckedOutSource> checkout(const protocol::SourceSpec& s) {
    return checkout_source(tmp_.path() / "cache", s, tmp_.path() / ("co" + std::to_string(n_++)));
  }

  TempDir tmp_;
  TestGitRepo repo_{tmp_.path() / "origin"};
  int n_ = 0;
};

TEST_F(GitSourceTest, ChecksOutTheCommitsTreeAndModulePath) {
  const auto id = repo_.commit({{"README", "top"}, {"infra/main.tf", "# tf"},
                                {"infra/sub/data.txt", "d"}, {"infra/link@", "sub/data.txt"}});
  auto r = checkout(spec(id, "infra"));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->commit, id);
  EXPECT_EQ(r->module_dir, r->root / "infra");
  EXPECT_EQ(slurp(r->root / "README"), "top");
  EXPECT_EQ(slurp(r->module_dir / "main.tf"), "# tf");
  EXPECT_EQ(slurp(r->module_dir / "sub/data.txt"), "d");
  EXPECT_EQ(fs::read_symlink(r->module_dir / "link"), "sub/data.txt");
  EXPECT_FALSE(fs::exists(r->root / ".git"));
  EXPECT_TRUE(fs::is_directory(cache_repository_path(tmp_.path() / "cache", repo_.url())));
}

TEST_F(GitSourceTest, ChecksOutAnOlderCommitExactly) {
  const auto first = repo_.commit({{"main.tf", "v1"}});
  repo_.commit({{"main.tf", "v2"}, {"extra.tf", "x"}});
  auto r = checkout(spec(first));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(slurp(r->module_dir / "main.tf"), "v1");
  EXPECT_FALSE(fs::exists(r->module_dir / "extra.tf"));
}

TEST_F(GitSourceTest, FetchesAgainWhenTheCacheLacksANewCommit) {
  ASSERT_TRUE(checkout(spec(repo_.commit({{"main.tf", "v1"}}))));
  const auto second = repo_.commit({{"main.tf", "v2"}});
  auto r = checkout(spec(second));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(slurp(r->module_dir / "main.tf"), "v2");
}

TEST_F(GitSourceTest, FindsACommitReachableOnlyFromATag) {
  repo_.commit({{"main.tf", "branch"}});
  const auto tagged = repo_.commit({{"main.tf", "tagged"}}, "refs/tags/v1");
  auto r = checkout(spec(tagged));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(slurp(r->module_dir / "main.tf"), "tagged");
}

TEST_F(GitSourceTest, MissingCommitIsSourceCommitMissing) {
  repo_.commit({{"main.tf", "v1"}});
  const auto dangling = repo_.dangling_commit({{"main.tf", "gone"}});
  for (const std::string& id : {dangling, std::string(40, 'a')}) {
    auto r = checkout(spec(id));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, "source_commit_missing");
    EXPECT_NE(r.error().message.find(id), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(repo_.url()), std::string::npos) << r.error().message;
  }
}

TEST_F(GitSourceTest, CommitStillCachedButRewrittenAwayUpstreamIsMissing) {
  const auto old = repo_.commit({{"main.tf", "v1"}});
  ASSERT_TRUE(checkout(spec(old)));  // the cache now holds the commit
  repo_.set_ref("refs/heads/main", repo_.dangling_commit({{"main.tf", "rewritten"}}));
  auto r = checkout(spec(old));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "source_commit_missing") << r.error().message;
  EXPECT_NE(r.error().message.find(old), std::string::npos);
}

TEST_F(GitSourceTest, UnreachableRepositoryIsSourceFetchFailed) {
  protocol::SourceSpec s{"file://" + (tmp_.path() / "nowhere").string(), std::string(40, 'b'), ""};
  auto r = checkout(s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "source_fetch_failed");
  EXPECT_NE(r.error().message.find("libgit2: "), std::string::npos) << r.error().message;
}

TEST_F(GitSourceTest, ModulePathMustStayInsideAndExist) {
  const auto id = repo_.commit({{"infra/main.tf", "x"}});
  for (const char* bad : {"/etc", "../x", "infra/../../x", "missing", "infra/main.tf"}) {
    auto r = checkout(spec(id, bad));
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "manifest_invalid") << bad;
  }
  EXPECT_TRUE(checkout(spec(id, "./infra/")));
}

TEST_F(GitSourceTest, SymlinkLeavingTheCheckoutIsRefused) {
  const auto id = repo_.commit({{"infra/main.tf", "x"}, {"infra/escape@", "../../etc/passwd"}});
  auto r = checkout(spec(id, "infra"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "source_fetch_failed");
  EXPECT_NE(r.error().message.find("escape"), std::string::npos) << r.error().message;
}

TEST_F(GitSourceTest, MalformedCommitIdIsManifestInvalid) {
  auto r = checkout(spec("HEAD"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "manifest_invalid");
}

TEST_F(GitSourceTest, AsyncCheckoutRunsOnThePool) {
  const auto id = repo_.commit({{"main.tf", "v1"}});
  boost::asio::io_context io;
  boost::asio::thread_pool pool(1);
  auto r = testing::run_to_end(io, async_checkout_source(pool, tmp_.path() / "cache", spec(id),
                                                         tmp_.path() / "async"));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(slurp(r->module_dir / "main.tf"), "v1");
}

TEST(RedactUrl, HidesCredentials) {
  EXPECT_EQ(redact_url("https://user:tok@example.com/r.git"), "https://***@example.com/r.git");
  EXPECT_EQ(redact_url("https://example.com/a@b"), "https://example.com/a@b");
  EXPECT_EQ(redact_url("file:///tmp/x"), "file:///tmp/x");
}

}  // namespace
}  // namespace takosumi::runner
