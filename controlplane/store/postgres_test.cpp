// What only the PostgreSQL driver does, on a real server: SQLite's parameters rewritten, and one
// writer at a time across connections (as across control-plane replicas) while reads go on.
#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "controlplane/store/postgres_sql.hpp"
#include "controlplane/testing/test_support.hpp"

namespace takosumi::controlplane {
namespace {

TEST(PostgresSql, ParametersAreNumberedAsSqliteNumbersThem) {
  auto sql = to_postgres_parameters(
      "SELECT a FROM t WHERE b = ? AND c = ?1 AND d = ? AND e = '?' AND \"f?\" = ? -- x = ?\n"
      " AND g = ?3");
  ASSERT_TRUE(sql) << sql.error().to_string();
  EXPECT_EQ(sql->text,
            "SELECT a FROM t WHERE b = $1 AND c = $1 AND d = $2 AND e = '?' AND \"f?\" = $3 -- x = ?\n"
            " AND g = $3");
  EXPECT_EQ(sql->parameters, 3);
  EXPECT_TRUE(sql->read_only);
  auto write = to_postgres_parameters("  UPDATE t SET a = ?5, b = ?");
  ASSERT_TRUE(write);
  EXPECT_EQ(write->text, "  UPDATE t SET a = $5, b = $6");
  EXPECT_EQ(write->parameters, 6);
  EXPECT_FALSE(write->read_only);
  EXPECT_FALSE(to_postgres_parameters("SELECT 'open"));
  EXPECT_FALSE(to_postgres_parameters("SELECT ?0"));
  EXPECT_FALSE(to_postgres_parameters("SELECT ?1000"));
}

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

TEST(PostgresDriver, AnUnreachableServerIsUnavailable) {
  auto db = Database::connect_postgres(
      {"postgresql:///postgres?host=/nonexistent-takosumi-socket-dir&connect_timeout=2", {}});
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, errc::kUnavailable) << db.error().to_string();
}

}  // namespace
}  // namespace takosumi::controlplane
