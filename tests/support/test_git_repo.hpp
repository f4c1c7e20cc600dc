#pragma once
// Test-only: a real Git repository made with libgit2 in a directory, with commits of given file
// contents. HEAD names refs/heads/main. Every libgit2 failure throws std::runtime_error, which
// fails the test.
#include <git2.h>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace takosumi::testing {

class TestGitRepo {
 public:
  // Initialises a non-bare repository at dir (created if missing).
  explicit TestGitRepo(std::filesystem::path dir);
  ~TestGitRepo();
  TestGitRepo(const TestGitRepo&) = delete;
  TestGitRepo& operator=(const TestGitRepo&) = delete;

  // Commits exactly these files ("dir/file" → content; a name ending in '@' is a symlink whose
  // target is the content, one ending in '*' an executable file) on top of ref, which it moves;
  // returns the commit id.
  std::string commit(const std::map<std::string, std::string>& files,
                     std::string_view ref = "refs/heads/main");
  // Writes a commit object reachable from no ref (a fetch never brings it).
  std::string dangling_commit(const std::map<std::string, std::string>& files);
  // Points ref (a branch, or a lightweight tag) at commit_id, creating or moving it.
  void set_ref(std::string_view ref, const std::string& commit_id);
  // Creates refs/tags/<name> as an annotated tag object on commit_id.
  void annotated_tag(std::string_view name, const std::string& commit_id);
  std::string url() const { return "file://" + dir_.string(); }
  const std::filesystem::path& path() const { return dir_; }

 private:
  git_oid write_tree(const std::map<std::string, std::string>& files);
  std::string make_commit(const std::map<std::string, std::string>& files, const char* ref);

  std::filesystem::path dir_;
  git_repository* repo_ = nullptr;
  git_signature* sig_ = nullptr;
};

}  // namespace takosumi::testing
