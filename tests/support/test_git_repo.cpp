#include "tests/support/test_git_repo.hpp"

#include <stdexcept>

namespace takosumi::testing {
namespace {

void check(int rc, std::string_view what) {
  if (rc >= 0) return;
  const git_error* e = git_error_last();
  throw std::runtime_error("test repo: " + std::string(what) +
                           ": libgit2: " + (e && e->message ? e->message : "unknown error"));
}

git_oid parse_oid(const std::string& hex) {
  git_oid id;
  check(git_oid_fromstr(&id, hex.c_str()), "parse commit id");
  return id;
}

}  // namespace

TestGitRepo::TestGitRepo(std::filesystem::path dir) : dir_(std::move(dir)) {
  static const int libgit2_once = git_libgit2_init();  // never shut down, like the runner's
  (void)libgit2_once;
  git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  opts.flags |= GIT_REPOSITORY_INIT_MKPATH;
  opts.initial_head = "main";
  check(git_repository_init_ext(&repo_, dir_.c_str(), &opts), "init");
  check(git_signature_new(&sig_, "Test", "test@example.invalid", 1700000000, 0), "signature");
}

TestGitRepo::~TestGitRepo() {
  git_signature_free(sig_);
  git_repository_free(repo_);
}

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
    const bool executable = path.ends_with('*');
    const std::string name = link || executable ? path.substr(0, path.size() - 1) : path;
    git_oid blob;
    check(git_blob_create_from_buffer(&blob, repo_, content.data(), content.size()), "blob");
    check(git_treebuilder_insert(nullptr, builder, name.c_str(), &blob,
                                 link         ? GIT_FILEMODE_LINK
                                 : executable ? GIT_FILEMODE_BLOB_EXECUTABLE
                                              : GIT_FILEMODE_BLOB),
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
  git_commit* parent = nullptr;
  git_oid parent_id;
  if (ref && git_reference_name_to_id(&parent_id, repo_, ref) == 0)
    check(git_commit_lookup(&parent, repo_, &parent_id), "parent");
  const git_commit* parents[] = {parent};
  git_oid id;
  check(git_commit_create(&id, repo_, ref, sig_, sig_, nullptr, "test commit", tree,
                          parent ? 1 : 0, parents),
        "commit");
  git_commit_free(parent);
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

void TestGitRepo::set_ref(std::string_view ref, const std::string& commit_id) {
  const git_oid id = parse_oid(commit_id);
  git_reference* out = nullptr;
  check(git_reference_create(&out, repo_, std::string(ref).c_str(), &id, /*force=*/1, nullptr),
        "set ref");
  git_reference_free(out);
}

void TestGitRepo::annotated_tag(std::string_view name, const std::string& commit_id) {
  const git_oid id = parse_oid(commit_id);
  git_object* target = nullptr;
  check(git_object_lookup(&target, repo_, &id, GIT_OBJECT_COMMIT), "tag target");
  git_oid tag;
  const int rc = git_tag_create(&tag, repo_, std::string(name).c_str(), target, sig_, "release",
                                /*force=*/0);
  git_object_free(target);
  check(rc, "annotated tag");
}

}  // namespace takosumi::testing
