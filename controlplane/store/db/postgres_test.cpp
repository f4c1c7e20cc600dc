// What only the PostgreSQL driver does, on a real server: one writer at a time across connections
// (as across control-plane replicas) while reads go on, a commit that did not commit reported, and
// a lost connection handled as a transaction needs, a damaged blob in the database refused, and
// replicas' notifications heard across a lost connection, and the database's clock followed.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <chrono>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "common/file_io.hpp"
#include "controlplane/store/blob_store.hpp"
#include "controlplane/store/db/postgres_listener.hpp"
#include "controlplane/store/db/store_clock.hpp"
#include "controlplane/testing/test_support.hpp"
#include "crypto/sha256.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

TEST(PostgresDriver, OneWriterAtATimeAcrossConnectionsWhileReadsGoOn) {
  const std::string url = testing::new_test_postgres_database();
  auto a = Database::connect_postgres({url, {}});
  auto b = Database::connect_postgres({url, {}});
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->exec("CREATE TABLE t (v BIGINT)"));
  ASSERT_TRUE(b->exec("SET lock_timeout = '300ms'"));
  {
    Transaction tx(*a);
    ASSERT_TRUE(tx.begun());
    ASSERT_TRUE(a->run("INSERT INTO t (v) VALUES (1)"));
    // b's write waits for a's transaction (here: until its lock_timeout), inside a transaction
    // or on its own; b's reads do not wait and see only committed rows.
    auto waited = b->run("INSERT INTO t (v) VALUES (2)");
    ASSERT_FALSE(waited);
    EXPECT_NE(waited.error().message.find("lock timeout"), std::string::npos)
        << waited.error().to_string();
    EXPECT_FALSE(b->in_transaction()) << "a failed write of its own leaves no transaction open";
    Transaction other(*b);
    EXPECT_FALSE(other.begun());
    EXPECT_EQ(*b->single_integer("SELECT count(*) FROM t"), 0);
    ASSERT_TRUE(tx.commit());
  }
  ASSERT_TRUE(b->run("INSERT INTO t (v) VALUES (2)"));
  EXPECT_EQ(*a->single_integer("SELECT count(*) FROM t"), 2);
}

TEST(PostgresDriver, ACommitThePostgresServerTurnedIntoARollbackFails) {
  auto db = Database::connect_postgres({testing::new_test_postgres_database(), {}});
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (v BIGINT PRIMARY KEY)"));
  ASSERT_TRUE(db->run("INSERT INTO t (v) VALUES (1)"));
  {
    Transaction tx(*db);
    ASSERT_TRUE(tx.begun());
    ASSERT_TRUE(db->run("INSERT INTO t (v) VALUES (2)"));
    // A failure the caller chose to ignore: PostgreSQL has aborted the whole transaction.
    auto duplicate = db->run("INSERT INTO t (v) VALUES (1)");
    ASSERT_FALSE(duplicate);
    EXPECT_EQ(duplicate.error().code, errc::kConflict);
    auto committed = tx.commit();
    ASSERT_FALSE(committed) << "SQLite would have kept row 2; PostgreSQL did not";
    EXPECT_NE(committed.error().message.find("rolled back"), std::string::npos)
        << committed.error().to_string();
  }
  EXPECT_FALSE(db->in_transaction());
  EXPECT_EQ(*db->single_integer("SELECT count(*) FROM t"), 1);
}

TEST(PostgresDriver, AConnectionLostInsideATransactionFailsItAndTheNextOneReconnects) {
  const std::string url = testing::new_test_postgres_database();
  auto db = Database::connect_postgres({url, {}});
  auto killer = Database::connect_postgres({url, {}});
  ASSERT_TRUE(db && killer);
  ASSERT_TRUE(db->exec("CREATE TABLE t (v BIGINT)"));
  const auto pid = db->single_integer("SELECT pg_backend_pid()");
  ASSERT_TRUE(pid);
  {
    Transaction tx(*db);
    ASSERT_TRUE(tx.begun());
    ASSERT_TRUE(db->run("INSERT INTO t (v) VALUES (1)"));
    ASSERT_TRUE(killer->single_integer("SELECT pg_terminate_backend(CAST(? AS integer))", *pid));
    auto lost = db->run("INSERT INTO t (v) VALUES (2)");
    ASSERT_FALSE(lost);
    EXPECT_EQ(lost.error().code, errc::kUnavailable) << lost.error().to_string();
    // Still inside the (lost) transaction: no silent reconnect that would run the rest of it
    // outside any transaction.
    EXPECT_TRUE(db->in_transaction());
    auto after = db->run("INSERT INTO t (v) VALUES (3)");
    ASSERT_FALSE(after);
    EXPECT_EQ(after.error().code, errc::kUnavailable);
    EXPECT_FALSE(tx.commit());
  }
  EXPECT_FALSE(db->in_transaction());
  // The next statement reconnects, with the session's settings set again.
  ASSERT_TRUE(db->run("INSERT INTO t (v) VALUES (4)"));
  auto s = db->query("SELECT current_setting('lock_timeout'), current_setting('TimeZone')");
  ASSERT_TRUE(s);
  ASSERT_TRUE(*s->step());
  EXPECT_EQ(s->text(0), "30s");
  EXPECT_EQ(s->text(1), "UTC");
  EXPECT_EQ(*db->single_integer("SELECT count(*) FROM t"), 1) << "only row 4 was committed";
}

TEST(PostgresDriver, ChangesCountsWritesOnly) {
  auto db = Database::connect_postgres({testing::new_test_postgres_database(), {}});
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (v BIGINT)"));
  ASSERT_TRUE(db->run("INSERT INTO t (v) VALUES (1), (2), (3)"));
  EXPECT_EQ(db->changes(), 3);
  EXPECT_EQ(*db->single_integer("SELECT count(*) FROM t"), 3);
  EXPECT_EQ(db->changes(), 3) << "a SELECT leaves the count of the last write, as in SQLite";
  ASSERT_TRUE(db->run("UPDATE t SET v = 0 WHERE v > 5"));
  EXPECT_EQ(db->changes(), 0);
}

TEST(PostgresDriver, ADatabaseNotInUtf8IsRefused) {
  auto admin = Database::connect_postgres({testing::test_postgres_url("postgres"), {}});
  ASSERT_TRUE(admin);
  const std::string name = testing::new_test_postgres_database_name();
  ASSERT_TRUE(admin->exec("CREATE DATABASE " + name +
                          " ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"));
  testing::TestDatabases::instance().add(name);
  auto db = Database::connect_postgres({testing::test_postgres_url(name), {}});
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, errc::kInvalidArgument);
  EXPECT_NE(db.error().message.find("LATIN1"), std::string::npos) << db.error().to_string();
}

TEST(PostgresBlobs, ADatabaseCopyThatDoesNotHashToItsNameIsNeverUsed) {
  takosumi::testing::TempDir dir;
  const PostgresSettings postgres{testing::new_test_postgres_database(), {}};
  Database db = testing::open_test_db(dir.path() / "unused.db", postgres);
  BlobStore blobs = *BlobStore::open(dir.path() / "a", postgres);
  const std::string bytes(kBlobChunkBytes + 100, 'x');
  auto sha = blobs.put(bytes);
  ASSERT_TRUE(sha);
  ASSERT_TRUE(db.run("UPDATE blob_chunks SET data = decode('AAAA', 'base64')"
                     " WHERE sha256 = ? AND seq = 1",
                     *sha));
  BlobStore other = *BlobStore::open(dir.path() / "b", postgres);
  auto path = other.path_for(*sha);
  ASSERT_FALSE(path);
  EXPECT_EQ(path.error().code, errc::kStateIntegrityFailed);
  EXPECT_NE(path.error().message.find("does not hash to its name"), std::string::npos)
      << path.error().to_string();
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "b" / "blobs" / *sha));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "b" / "tmp")) << "nothing left behind";
  EXPECT_EQ(read_file(*blobs.path_for(*sha), 4 << 20).value_or(""), bytes)
      << "the replica that stored it has its own copy";
}

// Replicas wake each other's long polls: a NOTIFY from another connection reaches the listener,
// and a listener whose connection was lost opens it again and hears the next one.
// Blobs a data directory holds that the database lacks (stored before blobs were shared) are
// shared when the store opens them, each checked first: a rotten file is never shared, and an
// upload is shared from the checked upload, never from a local copy.
TEST(PostgresBlobs, LocalBlobsAreSharedCheckedAndNeverFromARottenCopy) {
  takosumi::testing::TempDir dir;
  const PostgresSettings postgres{testing::new_test_postgres_database(), {}};
  Database db = testing::open_test_db(dir.path() / "unused.db", postgres);
  BlobStore a = *BlobStore::open(dir.path() / "a", postgres);
  const std::string good = "an envelope stored before the blobs were shared";
  const std::string good_sha = crypto::sha256_hex(good);
  const std::string rotten_sha = crypto::sha256_hex("what it was");
  ASSERT_TRUE(write_file_atomic(dir.path() / "a" / "blobs" / good_sha, good, 0600));
  ASSERT_TRUE(write_file_atomic(dir.path() / "a" / "blobs" / rotten_sha, "what it became", 0600));
  ASSERT_TRUE(a.share_local_blobs());
  BlobStore b = *BlobStore::open(dir.path() / "b", postgres);
  EXPECT_TRUE(*b.contains(good_sha));
  EXPECT_EQ(read_file(*b.path_for(good_sha), 4096).value_or(""), good);
  EXPECT_FALSE(*b.contains(rotten_sha)) << "a file that does not hash to its name stays local";

  // An upload of the rotten blob's true content: shared from the upload itself.
  const auto temp = a.new_temp_path();
  ASSERT_TRUE(write_file_atomic(temp, "what it was", 0600));
  ASSERT_TRUE(a.adopt(temp, rotten_sha));
  EXPECT_EQ(read_file(*b.path_for(rotten_sha), 4096).value_or(""), "what it was");
}

TEST(PostgresListener, HearsOtherConnectionsAndSurvivesALostConnection) {
  const std::string url = testing::new_test_postgres_database();
  boost::asio::io_context io;
  int notified = 0;
  auto listener = PostgresListener::start(io.get_executor(), PostgresSettings{url, {}},
                                          std::string(kClaimsChannel), [&] { ++notified; });
  ASSERT_TRUE(listener) << listener.error().to_string();
  auto other = Database::connect_postgres({url, {}});
  ASSERT_TRUE(other);
  // Runs the io_context until `target` notifications arrived (or a generous deadline passed).
  auto run_until = [&](int target) {
    io.restart();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (notified < target && std::chrono::steady_clock::now() < deadline)
      io.run_one_for(std::chrono::milliseconds(200));
  };
  ASSERT_TRUE(other->exec("NOTIFY " + std::string(kClaimsChannel)));
  run_until(1);
  EXPECT_EQ(notified, 1);

  ASSERT_TRUE(other->run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                         " WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()"));
  run_until(2);  // the reconnect's own wake (one may have been missed)
  EXPECT_EQ(notified, 2);
  EXPECT_EQ((*listener)->reconnects(), 1);
  ASSERT_TRUE(other->exec("NOTIFY " + std::string(kClaimsChannel)));
  run_until(3);
  EXPECT_EQ(notified, 3);
  (*listener)->stop();
}

TEST(PostgresDriver, AnUnreachableServerIsUnavailable) {
  auto db = Database::connect_postgres(
      {"postgresql:///postgres?host=/nonexistent-takosumi-socket-dir&connect_timeout=2", {}});
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, errc::kUnavailable) << db.error().to_string();
}

}  // namespace
}  // namespace takosumi::controlplane

namespace takosumi::controlplane {
namespace {

// A host clock an hour ahead: what such a replica would judge leases by without the database.
class AheadClock final : public Clock {
 public:
  std::int64_t now_unix() const override { return now_millis() / 1000; }
  std::int64_t now_millis() const override { return SystemClock().now_millis() + 3'600'000; }
  bool is_wall_clock() const override { return true; }
};

TEST(StoreClock, AReplicaWhoseHostClockIsAheadJudgesByTheDatabasesClock) {
  takosumi::testing::TempDir dir;
  const PostgresSettings postgres{testing::new_test_postgres_database(), {}};
  Database db = testing::open_test_db(dir.path() / "unused.db", postgres);
  AheadClock ahead;
  StoreClock clock(ahead);
  ASSERT_TRUE(clock.follows(db));
  ASSERT_TRUE(clock.sync(db));
  // The test server runs on this host: its clock is the real one, give or take a second.
  EXPECT_NEAR(static_cast<double>(clock.offset_millis()), -3'600'000.0, 1000.0);
  EXPECT_NEAR(static_cast<double>(clock.now_unix()), static_cast<double>(SystemClock().now_unix()),
              2.0);

  // A test's clock is never corrected, whatever the store.
  takosumi::testing::FakeClock fake{1'700'000'000};
  EXPECT_FALSE(StoreClock(fake).follows(db));
}

}  // namespace
}  // namespace takosumi::controlplane
