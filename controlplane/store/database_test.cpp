// Transactions over a real SQLite file: a Transaction inside another is a savepoint, so an inner
// failure undoes only the inner work and the outer one decides about the rest.
#include "controlplane/store/database.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

std::int64_t count(Database& db) {
  auto s = db.query("SELECT count(*) FROM t");
  return s && *s->step() ? s->integer(0) : -1;
}

class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(db_.exec("CREATE TABLE t (v INTEGER)")); }

  takosumi::testing::TempDir dir_;
  Database db_ = std::move(*Database::open(dir_.path() / "t.db"));
};

TEST_F(SqliteDbTest, NestedFailureRollsBackOnlyTheInnerWork) {
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

TEST_F(SqliteDbTest, OuterFailureRollsBackCommittedInnerWork) {
  auto outer = in_transaction(db_, [&]() -> Status {
    TAKOSUMI_TRY(in_transaction(db_, [&] { return db_.run("INSERT INTO t VALUES (1)"); }));
    return fail(errc::kInternal, "outer refused");
  });
  EXPECT_FALSE(outer);
  EXPECT_EQ(count(db_), 0);
}

TEST_F(SqliteDbTest, CollectReadsEveryRowInOrderAndStopsAtTheFirstRefusedRow) {
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

TEST_F(SqliteDbTest, AFailedBindTravelsWithTheStatementItFailedOn) {
  ASSERT_TRUE(db_.exec("INSERT INTO t VALUES (1)"));
  // Two values for one parameter: the second bind is out of range.
  auto s = db_.query("SELECT v FROM t WHERE v = ?", 1, 2);
  ASSERT_TRUE(s);
  auto rows = collect(std::move(s), [](const Statement& row) { return row.integer(0); });
  ASSERT_FALSE(rows) << "a query with a failed bind returned " << rows->size() << " rows";
  EXPECT_NE(rows.error().message.find("bind"), std::string::npos) << rows.error().to_string();
}

}  // namespace
}  // namespace takosumi::controlplane
