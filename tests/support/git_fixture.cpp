#include "tests/support/git_fixture.hpp"

#include <git2.h>
#include <gtest/gtest.h>

#include <fstream>

namespace takosumi::testing {
namespace {

void check(int rc, const char* what) {
  if (rc < 0) {
    const git_error* e = git_error_last();
    ADD_FAILURE() << what << ": " << (e ? e->message : "libgit2 error");
    std::abort();
  }
}

}  // namespace

GitFixture::GitFixture(std::filesystem::path dir) : dir_(std::move(dir)) {
  git_libgit2_init();
  std::filesystem::create_directories(dir_);
  git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  opts.initial_head = "main";
  opts.flags |= GIT_REPOSITORY_INIT_MKPATH;
  check(git_repository_init_ext(&repo_, dir_.c_str(), &opts), "git init");
}

GitFixture::~GitFixture() {
  git_repository_free(repo_);
  git_libgit2_shutdown();
}

std::string GitFixture::commit(const std::map<std::string, std::string>& files,
                               const std::string& message) {
  // Clear the work tree (except .git) so the commit holds exactly `files`.
  for (const auto& entry : std::filesystem::directory_iterator(dir_))
    if (entry.path().filename() != ".git") std::filesystem::remove_all(entry.path());
  git_index* index = nullptr;
  check(git_repository_index(&index, repo_), "index");
  check(git_index_clear(index), "index clear");
  for (const auto& [path, content] : files) {
    auto full = dir_ / path;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full, std::ios::binary) << content;
    check(git_index_add_bypath(index, path.c_str()), "index add");
  }
  check(git_index_write(index), "index write");
  git_oid tree_id, commit_id;
  check(git_index_write_tree(&tree_id, index), "write tree");
  git_index_free(index);
  git_tree* tree = nullptr;
  check(git_tree_lookup(&tree, repo_, &tree_id), "tree lookup");
  git_signature* sig = nullptr;
  check(git_signature_new(&sig, "takosumi test", "test@takosumi.invalid", 1764460800, 0), "signature");
  git_commit* parent = nullptr;
  git_oid head;
  const bool has_parent = git_reference_name_to_id(&head, repo_, "HEAD") == 0;
  if (has_parent) check(git_commit_lookup(&parent, repo_, &head), "parent");
  const git_commit* parents[] = {parent};
  check(git_commit_create(&commit_id, repo_, "HEAD", sig, sig, nullptr, message.c_str(), tree,
                          has_parent ? 1 : 0, parents),
        "commit");
  git_commit_free(parent);
  git_signature_free(sig);
  git_tree_free(tree);
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, &commit_id);
  return hex;
}

}  // namespace takosumi::testing
