// takosumi-control on a PostgreSQL store (a real server: the pg.* run): serve creates the schema
// of an empty database, refuses one at another version, and `migrate` is what brings an older
// one up. Replicas never migrate by themselves: an older replica may still be serving.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "common/error_codes.hpp"
#include "controlplane/commands.hpp"
#include "controlplane/control_plane.hpp"
#include "controlplane/store/schema.hpp"
#include "controlplane/testing/test_support.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

class PostgresStoreTest : public ::testing::Test {
 protected:
  PostgresStoreTest() : url_(testing::new_test_postgres_database()) {
    std::ofstream(dir_.path() / "api.token") << "an-api-token\n";
    std::ofstream(dir_.path() / "control.yaml")
        << "dataDir: data\napiTokenFile: api.token\npoolTokens: [p]\nmetrics:\n  listen: "
           "'127.0.0.1:0'\nstore:\n  driver: postgres\n  url: '"
        << url_ << "'\n";
  }

  Result<std::unique_ptr<ControlPlane>> create() {
    auto config = load_control_config(dir_.path() / "control.yaml", std::nullopt);
    if (!config) return std::unexpected(config.error());
    return ControlPlane::create(std::move(*config), clock_);
  }

  void set_version(std::int64_t version) {
    auto db = Database::connect_postgres({url_, {}});
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->run("UPDATE takosumi_schema SET version = ?", version));
  }

  std::int64_t version() {
    auto db = Database::connect_postgres({url_, {}});
    return db ? schema_version(*db).value_or(-1) : -1;
  }

  // takosumi-control migrate; its stdout.
  std::pair<int, std::string> migrate() {
    std::ostringstream out;
    auto* old = std::cout.rdbuf(out.rdbuf());
    const int code = command_migrate(dir_.path() / "control.yaml");
    std::cout.rdbuf(old);
    return {code, out.str()};
  }

  takosumi::testing::TempDir dir_;
  std::string url_;
  takosumi::testing::FakeClock clock_;
};

TEST_F(PostgresStoreTest, ServeCreatesTheSchemaOfAnEmptyDatabase) {
  ASSERT_EQ(version(), 0);
  auto control = create();
  ASSERT_TRUE(control) << control.error().to_string();
  EXPECT_GT(version(), 0);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "data" / "control.db"))
      << "no SQLite file beside a PostgreSQL store";
}

TEST_F(PostgresStoreTest, ServeRefusesAnOlderSchemaAndMigrateBringsItUp) {
  ASSERT_TRUE(create());
  const std::int64_t current = version();
  set_version(current - 1);
  auto refused = create();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kConfigInvalid);
  EXPECT_NE(refused.error().message.find("takosumi-control migrate"), std::string::npos)
      << refused.error().to_string();
  EXPECT_EQ(version(), current - 1) << "serve never migrates a PostgreSQL store";

  auto [code, out] = migrate();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, "schema version " + std::to_string(current) + " (was " +
                     std::to_string(current - 1) + ")\n");
  EXPECT_TRUE(create());
  auto again = migrate();
  EXPECT_EQ(again.first, 0);
  EXPECT_EQ(again.second, "schema version " + std::to_string(current) + " (was " +
                              std::to_string(current) + ")\n")
      << "a second migrate is a no-op";
}

TEST_F(PostgresStoreTest, ANewerSchemaIsRefusedByServeAndMigrate) {
  ASSERT_TRUE(create());
  const std::int64_t current = version();
  set_version(current + 1);
  auto refused = create();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kConfigInvalid);
  EXPECT_NE(refused.error().message.find("newer takosumi-control"), std::string::npos)
      << refused.error().to_string();
  EXPECT_EQ(migrate().first, 1);
  EXPECT_EQ(version(), current + 1);
}

TEST_F(PostgresStoreTest, AnUnreachableStoreIsReportedAsTheStores) {
  std::ofstream(dir_.path() / "control.yaml", std::ios::trunc)
      << "dataDir: data\napiTokenFile: api.token\npoolTokens: [p]\nstore:\n  driver: postgres\n"
         "  url: 'postgresql:///x?host=/nonexistent-takosumi-socket-dir&connect_timeout=2'\n";
  auto refused = create();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kUnavailable);
  EXPECT_NE(refused.error().to_string().find("store"), std::string::npos)
      << refused.error().to_string();
}

}  // namespace
}  // namespace takosumi::controlplane
