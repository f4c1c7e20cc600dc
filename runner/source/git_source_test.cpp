#include "runner/source/git_source.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <fstream>
#include <sstream>

#include "crypto/sha256.hpp"
#include "tests/support/run_to_end.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

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

constexpr std::string_view kWorkspace = "ws_test";

class GitSourceTest : public ::testing::Test {
 protected:
  protocol::SourceSpec spec(std::string commit, std::string module = "") {
    return {repo_.url(), std::move(commit), std::move(module)};
  }
  // The fixture's cache at `cache`, with the temporary directory as the one file root.
  SourceAccess access(const fs::path& cache) const {
    SourceAccess a;
    a.git_cache = cache;
    a.rules.file_roots = {tmp_.path()};
    a.rules.private_dirs = {tmp_.path() / "state"};
    a.fetch.helper = test_paths::githelper;
    return a;
  }
  Result<CheckedOutSource> checkout_at(const fs::path& cache, const protocol::SourceSpec& s,
                                       const fs::path& dest, std::optional<fs::path> pack = {}) {
    return checkout_source(access(cache), SourceRequest{std::string(kWorkspace), s, std::nullopt, pack}, dest);
  }
  Result<CheckedOutSource> checkout(const protocol::SourceSpec& s) {
    return checkout_at(tmp_.path() / "cache", s, tmp_.path() / ("co" + std::to_string(n_++)));
  }
  Result<std::string> pack(const fs::path& cache, const protocol::SourceSpec& s, const fs::path& out) {
    return git::pack_source(cache, kWorkspace, s.url, s.commit, std::nullopt, access(cache).fetch, out);
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
  EXPECT_TRUE(fs::is_directory(git::cache_repository_path(tmp_.path() / "cache", kWorkspace, repo_.url())));
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
  // A repository under the file roots: libgit2's own words are safe to show.
  EXPECT_NE(r.error().message.find("failed to resolve path"), std::string::npos) << r.error().message;
}

// The agent's own rules hold whatever a manifest names: schemes, credentials in the URL, and local
// repositories outside its file roots or inside its own directories (another Workspace's cache).
TEST_F(GitSourceTest, ASourceThisAgentDoesNotAllowIsRefusedBeforeAnythingIsFetched) {
  const auto id = repo_.commit({{"main.tf", "v1"}});
  const fs::path cache = tmp_.path() / "state/git-cache";
  ASSERT_TRUE(checkout_at(cache, spec(id), tmp_.path() / "first"));
  const std::string cache_copy = "file://" + git::cache_repository_path(cache, kWorkspace, repo_.url()).string();
  for (const std::string& url : {std::string("https://user:token@example.com/r.git"),
                                 std::string("git://example.com/r.git"),
                                 (tmp_.path() / "origin").string(), cache_copy}) {
    auto s = spec(id);
    s.url = url;
    auto denied = checkout_at(cache, s, tmp_.path() / ("denied" + std::to_string(n_++)));
    ASSERT_FALSE(denied) << url;
    EXPECT_EQ(denied.error().code, "source_denied") << url << ": " << denied.error().to_string();
    EXPECT_EQ(denied.error().message.find("user:token"), std::string::npos) << denied.error().message;
  }
  auto outside = access(tmp_.path() / "cache");
  outside.rules.file_roots = {tmp_.path() / "elsewhere"};
  auto r = checkout_source(outside, SourceRequest{std::string(kWorkspace), spec(id), std::nullopt, std::nullopt},
                           tmp_.path() / "outside");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "source_denied");
  EXPECT_NE(r.error().message.find("source.fileRoots"), std::string::npos) << r.error().message;
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
  auto r = testing::run_to_end(
      io, async_checkout_source(pool, access(tmp_.path() / "cache"),
                                SourceRequest{std::string(kWorkspace), spec(id), std::nullopt, std::nullopt},
                                tmp_.path() / "async"));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(slurp(r->module_dir / "main.tf"), "v1");
}

// An offline bundle's source: packed on the connected side, checked out on a site whose cache has
// never seen the repository and whose origin is gone (nothing is fetched).
TEST_F(GitSourceTest, APackedCommitChecksOutWithoutTheRepository) {
  repo_.commit({{"main.tf", "v1"}, {"old.tf", "o"}});
  const auto id = repo_.commit({{"main.tf", "v2"}, {"infra/x.tf", "x"}});
  const auto pack = tmp_.path() / "source.pack";
  auto tree = this->pack(tmp_.path() / "connected-cache", spec(id), pack);
  ASSERT_TRUE(tree) << tree.error().to_string();
  fs::remove_all(tmp_.path() / "origin");
  auto source = spec(id, "infra");
  source.tree = *tree;
  source.pack_sha256 = *crypto::sha256_file_hex(pack);
  auto r = checkout_at(tmp_.path() / "site-cache", source, tmp_.path() / "site", pack);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(slurp(r->module_dir / "x.tf"), "x");
  EXPECT_EQ(slurp(r->root / "main.tf"), "v2");
  EXPECT_FALSE(fs::exists(r->root / "old.tf"));
}

TEST_F(GitSourceTest, APackThatIsNotTheManifestsSourceIsRefused) {
  const auto first = repo_.commit({{"main.tf", "v1"}});
  const auto second = repo_.commit({{"main.tf", "v2"}});
  const auto pack = tmp_.path() / "source.pack";
  auto tree = this->pack(tmp_.path() / "connected-cache", spec(second), pack);
  ASSERT_TRUE(tree) << tree.error().to_string();
  const auto digest = *crypto::sha256_file_hex(pack);
  int n = 0;
  const auto site = [&](protocol::SourceSpec s) {
    const auto i = std::to_string(n++);
    return checkout_at(tmp_.path() / ("site-cache" + i), s, tmp_.path() / ("site" + i), pack);
  };
  // The pack holds another commit than the one signed.
  auto other = spec(first);
  other.pack_sha256 = digest;
  auto r = site(other);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "source_tree_mismatch");
  // The commit is there but the manifest recorded another tree.
  auto wrong_tree = spec(second);
  wrong_tree.pack_sha256 = digest;
  wrong_tree.tree = std::string(40, 'a');
  r = site(wrong_tree);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "source_tree_mismatch");
  EXPECT_NE(r.error().message.find(*tree), std::string::npos);
  // A byte of the pack changed: its digest no longer matches, and with the digest forged to match
  // it libgit2's own check of the objects refuses it.
  {
    std::fstream f(pack, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(pack) / 2));
    char c = 0;
    f.seekg(f.tellp());
    f.get(c);
    f.seekp(static_cast<std::streamoff>(fs::file_size(pack) / 2));
    f.put(static_cast<char>(c ^ 0x20));
  }
  auto flipped = spec(second);
  flipped.tree = *tree;
  flipped.pack_sha256 = digest;
  r = site(flipped);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "source_tree_mismatch");
  flipped.pack_sha256 = *crypto::sha256_file_hex(pack);
  r = site(flipped);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "source_tree_mismatch");
  // A pack the manifest does not name, or a named one not given.
  EXPECT_EQ(checkout_at(tmp_.path() / "c9", spec(second), tmp_.path() / "s9", pack).error().code,
            "manifest_invalid");
  EXPECT_EQ(checkout_at(tmp_.path() / "c10", flipped, tmp_.path() / "s10").error().code,
            "manifest_invalid");
}

// A small pack can name one big file many times: the checkout counts every file from its object's
// header before reading it, so the tree's size is refused, not written.
TEST_F(GitSourceTest, ATreeLargerThanTheWorkspaceLimitIsRefusedBeforeItIsWritten) {
  std::map<std::string, std::string> files;
  const std::string big(1 << 20, 'z');  // compresses to almost nothing
  for (int i = 0; i < 40; ++i) files["copy-" + std::to_string(i)] = big;
  const auto id = repo_.commit(files);
  auto a = access(tmp_.path() / "cache");
  a.max_bytes = 16ull << 20;
  auto r = checkout_source(a, SourceRequest{std::string(kWorkspace), spec(id), std::nullopt, std::nullopt},
                           tmp_.path() / "big");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "limit_exceeded") << r.error().to_string();
  EXPECT_NE(r.error().message.find("limits.workspaceMiB: 16 MiB"), std::string::npos) << r.error().message;
  std::uintmax_t written = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp_.path() / "big"))
    if (e.is_regular_file()) written += e.file_size();
  EXPECT_LE(written, 16u << 20);
  auto many = access(tmp_.path() / "cache");
  many.max_entries = 10;
  auto r2 = checkout_source(many, SourceRequest{std::string(kWorkspace), spec(id), std::nullopt, std::nullopt},
                            tmp_.path() / "many");
  ASSERT_FALSE(r2);
  EXPECT_NE(r2.error().message.find("more than 10 entries"), std::string::npos) << r2.error().message;
}

}  // namespace
}  // namespace takosumi::runner