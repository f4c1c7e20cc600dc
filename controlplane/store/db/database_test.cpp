// The database seam over real databases (SQLite, and PostgreSQL when the run is on it): a
// Transaction inside another is a savepoint, so an inner failure undoes only the inner work and
// the outer one decides about the rest; rows, binds and errors read alike on both drivers.
#include "controlplane/store/db/database.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "controlplane/testing/test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

std::int64_t count(Database& db) {
  auto s = db.query("SELECT count(*) FROM t");
  return s && *s->step() ? s->integer(0) : -1;
}

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(db_.exec("CREATE TABLE t (v INTEGER)")); }

  takosumi::testing::TempDir dir_;
  Database db_ = testing::open_test_db_without_schema(dir_.path() / "t.db");
};

TEST_F(DatabaseTest, NestedFailureRollsBackOnlyTheInnerWork) {
  auto outer = in_transaction(db_, [&]() -> Status {
    TAKOSUMI_TRY(db_.run("INSERT INTO t VALUES (1)"));
    auto inner = in_transaction(db_, [&]() -> Status {
      TAKOSUMI_TRY(db_.run("INSERT INTO t VALUES (2)"));
      return fail(errc::kConflict, "inner refused");
    });
    EXPECT_FALSE(inner);
    EXPECT_TRUE(db_.in_transaction());
    return {};
  });
  ASSERT_TRUE(outer) << outer.error().to_string();
  EXPECT_FALSE(db_.in_transaction());
  EXPECT_EQ(count(db_), 1);
}

TEST_F(DatabaseTest, OuterFailureRollsBackCommittedInnerWork) {
  auto outer = in_transaction(db_, [&]() -> Status {
    TAKOSUMI_TRY(in_transaction(db_, [&] { return db_.run("INSERT INTO t VALUES (1)"); }));
    return fail(errc::kInternal, "outer refused");
  });
  EXPECT_FALSE(outer);
  EXPECT_EQ(count(db_), 0);
}

TEST_F(DatabaseTest, CollectReadsEveryRowInOrderAndStopsAtTheFirstRefusedRow) {
  ASSERT_TRUE(db_.exec("INSERT INTO t VALUES (1), (2), (3)"));
  auto all = collect(db_.query("SELECT v FROM t ORDER BY v"),
                     [](const Statement& row) { return row.integer(0); });
  ASSERT_TRUE(all) << all.error().to_string();
  EXPECT_EQ(*all, (std::vector<std::int64_t>{1, 2, 3}));

  int read = 0;
  auto refused = collect(db_.query("SELECT v FROM t ORDER BY v"),
                         [&](const Statement& row) -> Result<std::int64_t> {
    ++read;
    if (row.integer(0) == 2) return fail(errc::kInternal, "row 2 is corrupt");
    return row.integer(0);
  });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kInternal);
  EXPECT_EQ(read, 2);

  auto bad_query = collect(db_.query("SELECT missing FROM t"), [](const Statement& row) {
    return row.integer(0);
  });
  ASSERT_FALSE(bad_query);
  EXPECT_NE(bad_query.error().message.find("missing"), std::string::npos)
      << bad_query.error().to_string();
}

TEST_F(DatabaseTest, AFailedBindTravelsWithTheStatementItFailedOn) {
  ASSERT_TRUE(db_.exec("INSERT INTO t VALUES (1)"));
  // Two values for one parameter: the second bind is out of range.
  auto s = db_.query("SELECT v FROM t WHERE v = ?", 1, 2);
  ASSERT_TRUE(s);
  auto rows = collect(std::move(s), [](const Statement& row) { return row.integer(0); });
  ASSERT_FALSE(rows) << "a query with a failed bind returned " << rows->size() << " rows";
  EXPECT_NE(rows.error().message.find("bind"), std::string::npos) << rows.error().to_string();
}

TEST_F(DatabaseTest, ValuesConstraintsAndChangesReadAlikeOnEveryDriver) {
  ASSERT_TRUE(db_.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, n BIGINT, note TEXT)"));
  const std::string odd = "it's \"quoted\" ? and -- not a comment, ünïcödé";
  ASSERT_TRUE(db_.run("INSERT INTO kv (k, n, note) VALUES (?, ?, ?)", "a", std::int64_t{1} << 40, odd));
  ASSERT_TRUE(db_.run("INSERT INTO kv (k, n, note) VALUES ('b?', ?2, ?1)", std::nullopt, -7));
  auto row = db_.query("SELECT n, note, n > 0 FROM kv WHERE k = ?", "a");
  ASSERT_TRUE(row && *row->step());
  EXPECT_EQ(row->integer(0), std::int64_t{1} << 40);
  EXPECT_EQ(row->text(1), odd);
  EXPECT_EQ(row->integer(2), 1) << "a comparison reads as 1";
  auto other = db_.query("SELECT n, note FROM kv WHERE k = 'b?'");
  ASSERT_TRUE(other && *other->step());
  EXPECT_EQ(other->integer(0), -7);
  EXPECT_EQ(other->optional_text(1), std::nullopt);

  auto twice = db_.run("INSERT INTO kv (k, n) VALUES (?, 1)", "a");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, errc::kConflict) << twice.error().to_string();
  ASSERT_TRUE(db_.run("INSERT INTO kv (k, n) VALUES (?, 1) ON CONFLICT DO NOTHING", "a"));
  EXPECT_EQ(db_.changes(), 0);
  ASSERT_TRUE(db_.run("UPDATE kv SET n = n + 1"));
  EXPECT_EQ(db_.changes(), 2);
  EXPECT_EQ(*db_.single_integer("SELECT count(*) FROM kv WHERE n IS DISTINCT FROM ?", 8), 2);
}

// A text value is never stored shortened or different per driver: a NUL byte (which
// PostgreSQL's text cannot hold) is refused on both; tool output goes in through without_nul().
TEST_F(DatabaseTest, ANulByteInTextIsRefusedAlikeOnEveryDriver) {
  ASSERT_TRUE(db_.exec("CREATE TABLE kv (k TEXT)"));
  auto nul = db_.run("INSERT INTO kv (k) VALUES (?)", std::string("a\0b", 3));
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error().code, errc::kInvalidArgument);
  EXPECT_NE(nul.error().message.find("NUL"), std::string::npos) << nul.error().to_string();
  EXPECT_EQ(*db_.single_integer("SELECT count(*) FROM kv"), 0);
  ASSERT_TRUE(db_.run("INSERT INTO kv (k) VALUES (?)", without_nul(std::string("a\0b", 3))));
  auto back = db_.query("SELECT k FROM kv");
  ASSERT_TRUE(back && *back->step());
  EXPECT_EQ(back->text(0), "a\xEF\xBF\xBD" "b");
}

}  // namespace
}  // namespace takosumi::controlplane
