#include "controlplane/git_ref_resolver.hpp"

#include <git2.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "controlplane/test_support.hpp"

namespace takosumi::controlplane {
namespace {

std::string last_git_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown";
}

// A real repository on branch "main" with one commit, a branch "feature" with a second commit,
// a lightweight tag "v1" and an annotated tag "v1-annotated" on the first commit.
class GitRefResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    git_libgit2_init();
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    opts.initial_head = "main";
    ASSERT_EQ(git_repository_init_ext(&repo_, dir_.path().c_str(), &opts), 0) << last_git_error();
    ASSERT_EQ(git_signature_new(&sig_, "Test", "test@example.com", 1700000000, 0), 0);
    main_commit_ = commit("HEAD", "main.tf", "# one\n", nullptr);
    git_commit* parent = nullptr;
    ASSERT_EQ(git_commit_lookup(&parent, repo_, &main_oid_), 0);
    git_reference* branch = nullptr;
    ASSERT_EQ(git_branch_create(&branch, repo_, "feature", parent, 0), 0) << last_git_error();
    git_reference_free(branch);
    feature_commit_ = commit("refs/heads/feature", "main.tf", "# two\n", parent);
    git_oid tag_oid;
    ASSERT_EQ(git_tag_create_lightweight(&tag_oid, repo_, "v1", reinterpret_cast<git_object*>(parent), 0), 0);
    ASSERT_EQ(git_tag_create(&tag_oid, repo_, "v1-annotated", reinterpret_cast<git_object*>(parent),
                             sig_, "release", 0), 0) << last_git_error();
    git_commit_free(parent);
  }

  void TearDown() override {
    git_signature_free(sig_);
    git_repository_free(repo_);
    git_libgit2_shutdown();
  }

  std::string commit(const char* ref, const std::string& file, const std::string& content,
                     git_commit* parent) {
    std::ofstream(dir_.path() / file) << content;
    git_index* index = nullptr;
    git_oid tree_oid, commit_oid;
    git_tree* tree = nullptr;
    EXPECT_EQ(git_repository_index(&index, repo_), 0);
    EXPECT_EQ(git_index_add_bypath(index, file.c_str()), 0) << last_git_error();
    EXPECT_EQ(git_index_write(index), 0);
    EXPECT_EQ(git_index_write_tree(&tree_oid, index), 0);
    EXPECT_EQ(git_tree_lookup(&tree, repo_, &tree_oid), 0);
    const git_commit* parents[] = {parent};
    EXPECT_EQ(git_commit_create(&commit_oid, repo_, ref, sig_, sig_, nullptr, "commit", tree,
                                parent ? 1 : 0, parents),
              0)
        << last_git_error();
    git_tree_free(tree);
    git_index_free(index);
    if (!parent) main_oid_ = commit_oid;
    char hex[GIT_OID_HEXSZ + 1] = {};
    git_oid_tostr(hex, sizeof hex, &commit_oid);
    return hex;
  }

  std::string url() const { return "file://" + dir_.path().string(); }

  testing::TempDir dir_;
  git_repository* repo_ = nullptr;
  git_signature* sig_ = nullptr;
  git_oid main_oid_{};
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
