// takosumi-control on a PostgreSQL store (a real server: the pg.* run): serve creates the schema
// of an empty database, refuses one at another version, and `migrate` is what brings an older
// one up (replicas never migrate by themselves: an older replica may still be serving); a
// replica serves the store only with the keys it was first served with.
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
    write_config("control.yaml", "data");
  }

  void write_config(const std::string& file, const std::string& data_dir) {
    std::ofstream(dir_.path() / file)
        << "dataDir: " << data_dir << "\napiTokenFile: api.token\npoolTokens: [p]\nmetrics:\n"
           "  listen: '127.0.0.1:0'\nstore:\n  driver: postgres\n  url: '"
        << url_ << "'\n";
  }

  Result<std::unique_ptr<ControlPlane>> create(const std::string& file = "control.yaml") {
    auto config = load_control_config(dir_.path() / file, std::nullopt);
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

// Replicas share one store only with one set of keys: one with keys of its own would sign
// manifests the agents refuse and could not open the StateVersions the others stored.
TEST_F(PostgresStoreTest, AReplicaWithOtherKeysIsRefusedAndOneWithTheSameKeysServes) {
  ASSERT_TRUE(create());
  write_config("replica.yaml", "replica");
  auto refused = create("replica.yaml");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kConfigInvalid);
  EXPECT_NE(refused.error().message.find("not the one the store was first served with"),
            std::string::npos)
      << refused.error().to_string();
  std::filesystem::remove_all(dir_.path() / "replica" / "keys");
  std::filesystem::copy(dir_.path() / "data" / "keys", dir_.path() / "replica" / "keys");
  auto replica = create("replica.yaml");
  EXPECT_TRUE(replica) << replica.error().to_string();
}

TEST_F(PostgresStoreTest, AUrlLibpqCannotReadIsRefusedWithoutQuotingIt) {
  std::ofstream(dir_.path() / "control.yaml", std::ios::trunc)
      << "dataDir: data\napiTokenFile: api.token\npoolTokens: [p]\nstore:\n  driver: postgres\n"
         "  url: 'postgresql://takosumi:s3cret%zz@db/x'\n";
  auto config = load_control_config(dir_.path() / "control.yaml", std::nullopt);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code, errc::kConfigInvalid);
  EXPECT_NE(config.error().message.find("store.url is not a libpq connection URI"),
            std::string::npos)
      << config.error().to_string();
  EXPECT_EQ(config.error().to_string().find("s3cret"), std::string::npos)
      << config.error().to_string();
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
