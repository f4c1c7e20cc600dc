// takosumi-control on a PostgreSQL store (a real server: the pg.* run): serve creates the schema
// of an empty database, refuses one at another version, and `migrate` is what brings an older
// one up (replicas never migrate by themselves: an older replica may still be serving); a
// replica serves the store only with the keys it was first served with; migrate-store moves a
// SQLite installation into it, once.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "common/error_codes.hpp"
#include "controlplane/commands.hpp"
#include "controlplane/control_plane.hpp"
#include "controlplane/store/db/schema.hpp"
#include "controlplane/store/stores.hpp"
#include "crypto/sha256.hpp"
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

// A v14 store (today's less the columns v15 added): migrate adds them and the rows read on.
TEST_F(PostgresStoreTest, MigrateFromVersion14AddsTheOpentofuColumns) {
  ASSERT_TRUE(create());
  auto db = Database::connect_postgres({url_, {}});
  ASSERT_TRUE(db);
  CatalogStore catalog(*db, clock_);
  auto ws = catalog.create_workspace("team");
  ASSERT_TRUE(ws) << ws.error().to_string();
  auto capsule = catalog.create_capsule(ws->id, {"app", {"file:///repo", "main", ""}, {}, {}});
  ASSERT_TRUE(capsule) << capsule.error().to_string();
  ASSERT_TRUE(db->exec("ALTER TABLE capsules DROP COLUMN opentofu_version;"
                       "ALTER TABLE runs DROP COLUMN tofu_build"));
  const std::int64_t current = version();
  set_version(14);

  auto [code, out] = migrate();
  EXPECT_EQ(code, 0) << out;
  EXPECT_EQ(version(), current);
  auto migrated = catalog.get_capsule(capsule->id);
  ASSERT_TRUE(migrated) << migrated.error().to_string();
  EXPECT_EQ(migrated->name, "app");
  EXPECT_FALSE(migrated->opentofu_version);
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM information_schema.columns WHERE table_schema"
                               " = current_schema() AND column_name = 'tofu_build'"),
            1);
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
  EXPECT_NE(refused.error().message.find("not the one the store is bound to"),
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

// A SQLite installation as a control plane leaves it: records (a rollback Run pointing at a
// StateVersion that points back at a Run, an agent pool, an OpenTofu version constraint and build,
// an audit event, a log line) and the ciphertext blob its StateVersion names.
struct SqliteInstallation {
  std::filesystem::path data_dir;
  std::string capsule_id;
  std::string blob_sha;
};

SqliteInstallation make_sqlite_installation(const std::filesystem::path& data_dir) {
  SqliteInstallation out{data_dir, {}, {}};
  std::filesystem::create_directories(data_dir);
  EXPECT_TRUE(Keyring::load_or_create(data_dir));
  auto db = Database::open_sqlite(data_dir / "control.db");
  EXPECT_TRUE(db && create_schema(*db));
  takosumi::testing::FakeClock clock{1'700'000'000};
  CatalogStore catalog(*db, clock);
  RunStore runs(*db, clock);
  AgentPoolStore pools(*db, clock);
  EXPECT_TRUE(pools.create({.name = "gpu", .labels = {"cuda"}, .workspaces = {"*"}}));
  auto ws = catalog.create_workspace("team");
  CapsuleRequest request{"app", {"file:///repo", "main", ""}, {}, {}};
  request.agents = {"gpu", {"cuda"}};
  request.opentofu_version = "~> 1.10.0";
  auto capsule = catalog.create_capsule(ws->id, request);
  EXPECT_TRUE(capsule) << capsule.error().to_string();
  out.capsule_id = capsule->id;
  auto blobs = BlobStore::open(data_dir);
  out.blob_sha = *blobs->put("an envelope of state, " + std::string(3 << 20, 's'));
  auto apply = runs.create_plan(*capsule, std::string(40, 'a'));
  EXPECT_TRUE(db->run("UPDATE runs SET tofu_build = '1.10.6' WHERE id = ?", apply->id));
  EXPECT_TRUE(db->run("INSERT INTO state_versions (id, capsule_id, generation, created_by_run_id,"
                      " source_commit, serial, lineage, plaintext_sha256, ciphertext_sha256,"
                      " created_at) VALUES ('sv_1', ?, 1, ?, 'c', 1, 'l', 'p', ?, 5)",
                      capsule->id, apply->id, out.blob_sha));
  auto state = StateStore(*db, clock).get("sv_1");
  EXPECT_TRUE(state);
  EXPECT_TRUE(runs.create_rollback_plan(*capsule, *state, false));
  EXPECT_TRUE(db->run("INSERT INTO run_logs (run_id, attempt, seq, text) VALUES (?, 1, 0, ?)",
                      apply->id, "Apply complete"));
  EXPECT_TRUE(AuditLog(*db, clock).record(AuditEvent{.actor = "admin", .action = "test.made"}));
  return out;
}

TEST_F(PostgresStoreTest, MigrateStoreMovesASqliteInstallationOnceAndItServesFromPostgres) {
  const auto source = make_sqlite_installation(dir_.path() / "sqlite-data");
  auto run = [&] {
    std::ostringstream out;
    auto* old = std::cout.rdbuf(out.rdbuf());
    const int code = command_migrate_store("sqlite:" + source.data_dir.string(), url_, std::nullopt);
    std::cout.rdbuf(old);
    return std::pair{code, out.str()};
  };
  auto [code, out] = run();
  ASSERT_EQ(code, 0);
  EXPECT_TRUE(out.starts_with("moved ")) << out;
  EXPECT_NE(out.find(" 1 blob(s)"), std::string::npos) << out;
  auto again = run();
  EXPECT_EQ(again.first, 0);
  EXPECT_NE(again.second.find("nothing to do"), std::string::npos) << again.second;

  // A replica on another host: the same keys, an empty cache; the blob comes from the database.
  std::filesystem::create_directories(dir_.path() / "data");
  std::filesystem::copy(source.data_dir / "keys", dir_.path() / "data" / "keys");
  auto control = create();
  ASSERT_TRUE(control) << control.error().to_string();
  auto db = Database::connect_postgres({url_, {}});
  ASSERT_TRUE(db);
  takosumi::testing::FakeClock clock;
  auto capsule = CatalogStore(*db, clock).get_capsule(source.capsule_id);
  ASSERT_TRUE(capsule) << capsule.error().to_string();
  EXPECT_EQ(capsule->agent_pool, "gpu");
  EXPECT_EQ(capsule->opentofu_version, "~> 1.10.0");
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM runs WHERE tofu_build = '1.10.6'"), 1);
  EXPECT_EQ(AgentPoolStore(*db, clock).get("gpu")->labels, std::vector<std::string>{"cuda"});
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM runs WHERE restores_state_version_id = 'sv_1'"),
            1)
      << "the rollback still points at its StateVersion";
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM run_logs"), 1);
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM audit_events"), 1);
  EXPECT_TRUE(AuditLog(*db, clock).record(AuditEvent{.actor = "admin", .action = "after.move"}))
      << "new audit events are numbered after the moved ones";
  auto cache = BlobStore::open(dir_.path() / "fresh-cache", PostgresSettings{url_, {}});
  ASSERT_TRUE(cache);
  auto path = cache->path_for(source.blob_sha);
  ASSERT_TRUE(path) << path.error().to_string();
  EXPECT_EQ(crypto::sha256_file_hex(*path).value_or(""), source.blob_sha);
}

TEST_F(PostgresStoreTest, MigrateStoreRefusesADamagedBlobAndATargetThatHoldsOtherRecords) {
  const auto source = make_sqlite_installation(dir_.path() / "sqlite-data");
  const auto blob = source.data_dir / "blobs" / source.blob_sha;
  {
    std::fstream f(blob, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('X');
  }
  std::ostringstream err;
  EXPECT_EQ(command_migrate_store("sqlite:" + source.data_dir.string(), url_, std::nullopt), 1);
  auto db = Database::connect_postgres({url_, {}});
  ASSERT_TRUE(db);
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM capsules"), 0) << "nothing moved";
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM blobs"), 0);
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM control_plane_keys"), 0)
      << "nor bound to the source's keys";

  // Records there already: refused.
  const auto other = make_sqlite_installation(dir_.path() / "other-data");
  ASSERT_TRUE(db->run("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_x', 'x', 1)"));
  EXPECT_EQ(command_migrate_store("sqlite:" + other.data_dir.string(), url_, std::nullopt), 1);
  EXPECT_EQ(db->single_integer("SELECT count(*) FROM capsules"), 0);
  EXPECT_EQ(command_migrate_store("sqlite-data", url_, std::nullopt), 1) << "not sqlite:<dir>";
}

}  // namespace
}  // namespace takosumi::controlplane
