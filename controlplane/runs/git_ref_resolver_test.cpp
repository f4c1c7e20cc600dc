#include "controlplane/runs/git_ref_resolver.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/error_codes.hpp"
#include "protocol/failure_codes.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::controlplane {
namespace {

using takosumi::testing::TempDir;
using takosumi::testing::TestGitRepo;

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

  std::string url() const { return repo_.url(); }

  TempDir dir_;
  TestGitRepo repo_{dir_.path()};
  std::string main_commit_;
  std::string feature_commit_;
  GitRefResolver resolver_;
};

TEST_F(GitRefResolverTest, ResolvesBranchesAndHead) {
  EXPECT_EQ(resolver_.resolve(url(), "main").value_or("?"), main_commit_);
  EXPECT_EQ(resolver_.resolve(url(), "HEAD").value_or("?"), main_commit_);
  EXPECT_EQ(resolver_.resolve(url(), "feature").value_or("?"), feature_commit_);
  EXPECT_EQ(resolver_.resolve(url(), "refs/heads/feature").value_or("?"), feature_commit_);
  EXPECT_NE(main_commit_, feature_commit_);
}

TEST_F(GitRefResolverTest, ResolvesTagsToCommits) {
  EXPECT_EQ(resolver_.resolve(url(), "v1").value_or("?"), main_commit_);
  EXPECT_EQ(resolver_.resolve(url(), "v1-annotated").value_or("?"), main_commit_);
}

TEST_F(GitRefResolverTest, PlainPathsWorkToo) {
  EXPECT_EQ(resolver_.resolve(dir_.path().string(), "main").value_or("?"), main_commit_);
}

TEST_F(GitRefResolverTest, TakesA40HexRefAsTheCommit) {
  const std::string upper = "ABCDEF0123456789ABCDEF0123456789ABCDEF01";
  EXPECT_EQ(resolver_.resolve("file:///nonexistent", upper).value_or("?"),
            "abcdef0123456789abcdef0123456789abcdef01");
}

TEST_F(GitRefResolverTest, UnknownRefIsAClearError) {
  auto r = resolver_.resolve(url(), "no-such-branch");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kInvalidArgument);
  EXPECT_NE(r.error().message.find("no branch, tag or HEAD named \"no-such-branch\""),
            std::string::npos)
      << r.error().message;
}

TEST_F(GitRefResolverTest, UnreachableRepositoryIsAFetchFailure) {
  auto r = resolver_.resolve("file://" + (dir_.path() / "missing").string(), "main");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kSourceFetchFailed);
  EXPECT_NE(r.error().message.find("resolve ref \"main\""), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace takosumi::controlplane
