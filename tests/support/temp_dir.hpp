#pragma once
// Test-only: a private temporary directory that removes itself.
#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <system_error>

namespace takosumi::testing {

// Creates a fresh directory "<prefix>XXXXXX" under the system temp directory with mkdtemp and
// returns its path; the caller owns it. Throws std::system_error if mkdtemp fails.
inline std::filesystem::path make_temp_dir(std::string_view prefix) {
  std::string name = (std::filesystem::temp_directory_path() / prefix).string() + "XXXXXX";
  if (::mkdtemp(name.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + name);
  return name;
}

// A directory from make_temp_dir, removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "takosumi-test-") : path_(make_temp_dir(prefix)) {}
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

  // File names directly in the directory, to prove a failed operation left nothing behind.
  std::set<std::string> entries() const {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      out.insert(e.path().filename().string());
    return out;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace takosumi::testing
