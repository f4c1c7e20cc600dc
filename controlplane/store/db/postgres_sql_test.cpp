// SQLite's parameters as PostgreSQL reads them (pure: runs without a server, on every test run).
#include <gtest/gtest.h>

#include "controlplane/store/db/postgres_sql.hpp"

namespace takosumi::controlplane {
namespace {

TEST(PostgresSql, ParametersAreNumberedAsSqliteNumbersThem) {
  auto sql = to_postgres_parameters(
      "SELECT a FROM t WHERE b = ? AND c = ?1 AND d = ? AND e = '?' AND \"f?\" = ? -- x = ?\n"
      " AND g = ?3 AND h = 'it''s ?'");
  ASSERT_TRUE(sql) << sql.error().to_string();
  EXPECT_EQ(sql->text,
            "SELECT a FROM t WHERE b = $1 AND c = $1 AND d = $2 AND e = '?' AND \"f?\" = $3 -- x = ?\n"
            " AND g = $3 AND h = 'it''s ?'");
  EXPECT_EQ(sql->parameters, 3);
  EXPECT_TRUE(sql->read_only);
  auto write = to_postgres_parameters("  UPDATE t SET a = ?5, b = ?, name = 'E'");
  ASSERT_TRUE(write);
  EXPECT_EQ(write->text, "  UPDATE t SET a = $5, b = $6, name = 'E'");
  EXPECT_EQ(write->parameters, 6);
  EXPECT_FALSE(write->read_only);
}

TEST(PostgresSql, WhatTheScannerCannotFollowIsRefused) {
  EXPECT_FALSE(to_postgres_parameters("SELECT 'open"));
  EXPECT_FALSE(to_postgres_parameters("SELECT ?0"));
  EXPECT_FALSE(to_postgres_parameters("SELECT ?1000"));
  EXPECT_FALSE(to_postgres_parameters("SELECT a /* b = ? */ FROM t"));
  EXPECT_FALSE(to_postgres_parameters("SELECT $$?$$"));
  EXPECT_FALSE(to_postgres_parameters("SELECT a FROM t WHERE b = $1"));
  EXPECT_FALSE(to_postgres_parameters("SELECT E'\\' ?'"));
  EXPECT_TRUE(to_postgres_parameters("SELECT a FROM t WHERE name = 'E'"))
      << "a literal E inside a string is not an E'' string";
  EXPECT_TRUE(to_postgres_parameters("SELECT a FROM t WHERE type = 'x'"));
}

}  // namespace
}  // namespace takosumi::controlplane
