#include "runner/test_git_repo.hpp"

#include <stdexcept>

#include "runner/libgit2_error.hpp"

namespace takosumi::runner::testing {
namespace {

void check(int rc, std::string_view what) {
  if (rc < 0) throw std::runtime_error(libgit2_error("test", what).message);
}

}  // namespace

TestGitRepo::TestGitRepo(std::filesystem::path dir) : dir_(std::move(dir)) {
  ensure_libgit2();
  check(git_repository_init(&repo_, dir_.c_str(), /*is_bare=*/0), "init");
}

TestGitRepo::~TestGitRepo() { git_repository_free(repo_); }

git_oid TestGitRepo::write_tree(const std::map<std::string, std::string>& files) {
  std::map<std::string, std::map<std::string, std::string>> subdirs;
  git_treebuilder* builder = nullptr;
  check(git_treebuilder_new(&builder, repo_, nullptr), "treebuilder");
  for (const auto& [path, content] : files) {
    const auto slash = path.find('/');
    if (slash != std::string::npos) {
      subdirs[path.substr(0, slash)][path.substr(slash + 1)] = content;
      continue;
    }
    const bool link = path.ends_with('@');
    const std::string name = link ? path.substr(0, path.size() - 1) : path;
    git_oid blob;
    check(git_blob_create_from_buffer(&blob, repo_, content.data(), content.size()), "blob");
    check(git_treebuilder_insert(nullptr, builder, name.c_str(), &blob,
                                 link ? GIT_FILEMODE_LINK : GIT_FILEMODE_BLOB),
          "insert");
  }
  for (const auto& [name, children] : subdirs) {
    const git_oid sub = write_tree(children);
    check(git_treebuilder_insert(nullptr, builder, name.c_str(), &sub, GIT_FILEMODE_TREE), "insert");
  }
  git_oid tree;
  check(git_treebuilder_write(&tree, builder), "write tree");
  git_treebuilder_free(builder);
  return tree;
}

std::string TestGitRepo::make_commit(const std::map<std::string, std::string>& files,
                                     const char* ref) {
  const git_oid tree_id = write_tree(files);
  git_tree* tree = nullptr;
  check(git_tree_lookup(&tree, repo_, &tree_id), "tree lookup");
  git_signature* sig = nullptr;
  check(git_signature_new(&sig, "Test", "test@example.invalid", 1700000000, 0), "signature");
  git_commit* parent = nullptr;
  git_oid parent_id;
  if (ref && git_reference_name_to_id(&parent_id, repo_, ref) == 0)
    check(git_commit_lookup(&parent, repo_, &parent_id), "parent");
  const git_commit* parents[] = {parent};
  git_oid id;
  check(git_commit_create(&id, repo_, ref, sig, sig, nullptr, "test commit", tree, parent ? 1 : 0,
                          parents),
        "commit");
  git_commit_free(parent);
  git_signature_free(sig);
  git_tree_free(tree);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &id);
  return hex;
}

std::string TestGitRepo::commit(const std::map<std::string, std::string>& files,
                                std::string_view ref) {
  return make_commit(files, std::string(ref).c_str());
}

std::string TestGitRepo::dangling_commit(const std::map<std::string, std::string>& files) {
  return make_commit(files, nullptr);
}

}  // namespace takosumi::runner::testing
