#pragma once
// Test helper: a real Git repository made with libgit2 in a directory, with commits of given
// file contents. Aborts the test (via exceptions) on libgit2 failure.
#include <git2.h>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace takosumi::runner::testing {

class TestGitRepo {
 public:
  explicit TestGitRepo(std::filesystem::path dir);
  ~TestGitRepo();
  TestGitRepo(const TestGitRepo&) = delete;
  TestGitRepo& operator=(const TestGitRepo&) = delete;

  // Commits exactly these files ("dir/file" → content; a name ending in '@' is a symlink whose
  // target is the content) on top of ref, which it moves; returns the commit id.
  std::string commit(const std::map<std::string, std::string>& files,
                     std::string_view ref = "refs/heads/main");
  // Writes a commit object reachable from no ref (a fetch never brings it).
  std::string dangling_commit(const std::map<std::string, std::string>& files);
  std::string url() const { return "file://" + dir_.string(); }

 private:
  git_oid write_tree(const std::map<std::string, std::string>& files);
  std::string make_commit(const std::map<std::string, std::string>& files, const char* ref);

  std::filesystem::path dir_;
  git_repository* repo_ = nullptr;
};

}  // namespace takosumi::runner::testing
