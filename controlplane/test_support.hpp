#pragma once
// Test-only helpers for the control plane's unit tests: a temporary directory that removes
// itself, and a store bundle over a fresh SQLite file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "controlplane/schema.hpp"
#include "controlplane/sqlite_db.hpp"

namespace takosumi::controlplane::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tkscp-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline Database open_test_db(const std::filesystem::path& file) {
  auto db = Database::open(file);
  if (!db) throw std::runtime_error(db.error().to_string());
  if (auto st = create_schema(*db); !st) throw std::runtime_error(st.error().to_string());
  return std::move(*db);
}

}  // namespace takosumi::controlplane::testing
