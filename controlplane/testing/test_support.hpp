#pragma once
// Test-only helpers for the control plane's store tests: a fresh database with the schema, on
// the driver the test run names. The store suites run twice (takosumi_on_postgres in
// CMakeLists.txt): on SQLite, and on a real PostgreSQL server that tests/postgres/test_server.sh
// started, named by TAKOSUMI_TEST_PG_STATE (its state directory). A missing server fails the
// test: never a silent fallback to SQLite.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "controlplane/store/db/database.hpp"
#include "controlplane/store/db/schema.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::testing {

inline bool testing_on_postgres() { return std::getenv("TAKOSUMI_TEST_PG_STATE") != nullptr; }

// The URL of database `name` on the test server.
inline std::string test_postgres_url(const std::string& name) {
  const char* state = std::getenv("TAKOSUMI_TEST_PG_STATE");
  if (!state) throw std::runtime_error("TAKOSUMI_TEST_PG_STATE is not set");
  std::string socket_dir, user;
  std::ifstream(std::filesystem::path(state) / "socket_dir") >> socket_dir;
  std::ifstream(std::filesystem::path(state) / "user") >> user;
  if (socket_dir.empty())
    throw std::runtime_error(std::string("no PostgreSQL test server in ") + state +
                             " (tests/postgres/test_server.sh start)");
  return "postgresql:///" + name + "?host=" + socket_dir + "&user=" + user;
}

// The databases this test process made, dropped when it exits: a CI disk holds two builds and
// the server, and hundreds of 8 MB databases kept until the server stops do not fit beside them.
class TestDatabases {
 public:
  static TestDatabases& instance() {
    static TestDatabases databases;
    return databases;
  }
  void add(std::string name) { names_.push_back(std::move(name)); }
  ~TestDatabases() {
    if (names_.empty()) return;
    try {  // never an exception out of a destructor: the test has passed or failed already
      auto admin = controlplane::Database::connect_postgres({test_postgres_url("postgres"), {}});
      if (!admin) return;  // the server is gone; test_server.sh stop removes the whole cluster
      for (const auto& name : names_) (void)admin->exec("DROP DATABASE " + name + " WITH (FORCE)");
    } catch (...) {
    }
  }

 private:
  std::vector<std::string> names_;
};

// A new, empty PostgreSQL database of its own on the test server; returns its URL. FILE_COPY
// copies the template's files instead of writing all of them to the WAL.
inline std::string new_test_postgres_database_name() { return "t_" + crypto::new_id("db").substr(3); }

inline std::string new_test_postgres_database() {
  auto admin = controlplane::Database::connect_postgres({test_postgres_url("postgres"), {}});
  if (!admin) throw std::runtime_error(admin.error().to_string());
  const std::string name = new_test_postgres_database_name();
  if (auto made = admin->exec("CREATE DATABASE " + name + " STRATEGY FILE_COPY"); !made)
    throw std::runtime_error(made.error().to_string());
  TestDatabases::instance().add(name);
  return test_postgres_url(name);
}

// A new PostgreSQL database when the run is on PostgreSQL; none (SQLite) otherwise.
inline std::optional<controlplane::PostgresSettings> new_test_store() {
  if (!testing_on_postgres()) return std::nullopt;
  return controlplane::PostgresSettings{new_test_postgres_database(), {}};
}

// SQLite at `file`, or the PostgreSQL database `postgres` (by default a new one when the run is
// on PostgreSQL).
inline controlplane::Database open_test_db_without_schema(
    const std::filesystem::path& file,
    const std::optional<controlplane::PostgresSettings>& postgres = new_test_store()) {
  auto db = postgres ? controlplane::Database::connect_postgres(*postgres)
                     : controlplane::Database::open_sqlite(file);
  if (!db) throw std::runtime_error(db.error().to_string());
  return std::move(*db);
}

inline controlplane::Database open_test_db(
    const std::filesystem::path& file,
    const std::optional<controlplane::PostgresSettings>& postgres = new_test_store()) {
  auto db = open_test_db_without_schema(file, postgres);
  if (auto st = controlplane::create_schema(db); !st) throw std::runtime_error(st.error().to_string());
  return db;
}

}  // namespace takosumi::testing
