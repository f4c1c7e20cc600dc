#pragma once
// Makes real git repositories for tests with libgit2: commit a set of files to a branch, get the
// commit id back. Test-only: failures abort the test via GoogleTest assertions in the .cpp.
#include <filesystem>
#include <map>
#include <string>

struct git_repository;

namespace takosumi::testing {

class GitFixture {
 public:
  // Initialises a non-bare repository at dir with branch "main".
  explicit GitFixture(std::filesystem::path dir);
  ~GitFixture();
  GitFixture(const GitFixture&) = delete;
  GitFixture& operator=(const GitFixture&) = delete;

  // Replaces the whole tree with files (path → content) and commits; returns the commit id.
  std::string commit(const std::map<std::string, std::string>& files, const std::string& message);
  std::string url() const { return "file://" + dir_.string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  ::git_repository* repo_ = nullptr;
};

}  // namespace takosumi::testing
