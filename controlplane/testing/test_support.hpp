#pragma once
// Test-only helpers for the control plane's unit tests: a fresh SQLite file with the schema.
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "controlplane/store/schema.hpp"
#include "controlplane/store/database.hpp"

namespace takosumi::testing {

inline controlplane::Database open_test_db(const std::filesystem::path& file) {
  auto db = controlplane::Database::open(file);
  if (!db) throw std::runtime_error(db.error().to_string());
  if (auto st = controlplane::create_schema(*db); !st) throw std::runtime_error(st.error().to_string());
  return std::move(*db);
}

}  // namespace takosumi::testing
