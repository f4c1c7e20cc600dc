#pragma once
// A tiny RAII wrapper over SQLite: one connection (WAL, foreign keys on), prepared statements with
// bound parameters, and transactions that roll back unless committed. Not thread-safe: the control
// plane touches the database from its one io_context thread only.
// Errors: a violated constraint is `conflict`; anything else is `internal` with SQLite's message.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/error_codes.hpp"

namespace takosumi::controlplane {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  // A bind that failed stays with the statement: step() reports it wherever the statement went.
  Statement(Statement&& other) noexcept
      : db_(other.db_),
        stmt_(std::exchange(other.stmt_, nullptr)),
        bind_status_(std::move(other.bind_status_)) {}
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, std::int64_t{value}); }
  Statement& bind(int index, bool value) { return bind(index, std::int64_t{value ? 1 : 0}); }
  Statement& bind(int index, std::nullopt_t);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, std::nullopt);
  }

  // True when a row is available; false when the statement is done.
  Result<bool> step();
  // Steps to completion, for statements that return no rows.
  Status run();

  bool is_null(int column) const;
  std::string text(int column) const;
  std::optional<std::string> optional_text(int column) const;
  std::int64_t integer(int column) const;
  std::optional<std::int64_t> optional_integer(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  Status bind_status_;
};

// Reads the current row's columns in the order of the SELECT, so a row mapper names each field
// once, in that order, with no column numbers to keep in step with the column list:
//   ColumnReader(s) >> run.id >> run.capsule_id >> run.lease_expires_at;
// An integer read into a bool is "not 0"; NULL reads as nullopt into an optional.
class ColumnReader {
 public:
  explicit ColumnReader(const Statement& s) : s_(s) {}
  template <class T>
  ColumnReader& operator>>(T& out) {
    read(next_++, out);
    return *this;
  }

 private:
  void read(int c, std::string& out) const { out = s_.text(c); }
  void read(int c, std::optional<std::string>& out) const { out = s_.optional_text(c); }
  void read(int c, std::int64_t& out) const { out = s_.integer(c); }
  void read(int c, std::optional<std::int64_t>& out) const { out = s_.optional_integer(c); }
  void read(int c, bool& out) const { out = s_.integer(c) != 0; }

  const Statement& s_;
  int next_ = 0;
};

class Database {
 public:
  // Opens (creating) the file, enables WAL and foreign keys, sets a busy timeout.
  static Result<Database> open(const std::filesystem::path& path);
  ~Database();
  Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  Database& operator=(Database&&) = delete;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Status exec(std::string_view sql);
  Result<Statement> prepare(std::string_view sql);
  // Prepares and binds args to parameters 1..N.
  template <class... Args>
  Result<Statement> query(std::string_view sql, const Args&... args) {
    auto stmt = prepare(sql);
    if (!stmt) return stmt;
    int index = 0;
    (stmt->bind(++index, args), ...);
    return stmt;
  }
  // Runs a statement that returns no rows.
  template <class... Args>
  Status run(std::string_view sql, const Args&... args) {
    auto stmt = query(sql, args...);
    if (!stmt) return std::unexpected(stmt.error());
    return stmt->run();
  }
  // The first column of the first row as an integer (0 when there is no row): counts, pragmas.
  template <class... Args>
  Result<std::int64_t> single_integer(std::string_view sql, const Args&... args) {
    auto stmt = query(sql, args...);
    if (!stmt) return std::unexpected(stmt.error());
    auto row = stmt->step();
    if (!row) return std::unexpected(row.error());
    return *row ? stmt->integer(0) : 0;
  }
  std::int64_t changes() const { return sqlite3_changes64(db_); }
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

namespace detail {
template <class T>
struct RowOf {
  using type = T;
};
template <class T>
struct RowOf<Result<T>> {
  using type = T;
};
}  // namespace detail

// Steps the query `s` to its end and returns row(s) for every row, in order. `row` reads the
// current row and returns a T, or a Result<T> when a row can be refused; the first error (the
// query's, SQLite's or the row's) ends the collection and is returned.
template <class RowFn,
          class Made = std::invoke_result_t<RowFn&, Statement&>,
          class T = typename detail::RowOf<Made>::type>
Result<std::vector<T>> collect(Result<Statement> s, RowFn&& row) {
  if (!s) return std::unexpected(s.error());
  std::vector<T> out;
  for (;;) {
    auto more = s->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) return out;
    if constexpr (std::is_same_v<Made, Result<T>>) {
      auto made = row(*s);
      if (!made) return std::unexpected(made.error());
      out.push_back(std::move(*made));
    } else {
      out.push_back(row(*s));
    }
  }
}

// Steps `s` (a query by key) to its first row and returns row(s), a T or a Result<T> as for
// collect(); no row is not_found "<what> not found" (what: "run 0190…").
template <class RowFn,
          class Made = std::invoke_result_t<RowFn&, Statement&>,
          class T = typename detail::RowOf<Made>::type>
Result<T> one_row(Result<Statement> s, std::string_view what, RowFn&& row) {
  if (!s) return std::unexpected(s.error());
  auto found = s->step();
  if (!found) return std::unexpected(found.error());
  if (!*found) return fail(errc::kNotFound, std::string(what) + " not found");
  return row(*s);
}

// BEGIN IMMEDIATE on construction (check begun()); rolls back in the destructor unless committed.
// Inside another Transaction it is a SAVEPOINT instead, so an action and the audit record written
// beside it can share one transaction while the stores keep their own.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  const Status& begun() const { return begun_; }
  Status commit();

 private:
  Database& db_;
  bool nested_;
  Status begun_;
  bool done_ = false;
};

// Runs `work` (returning Result<T> or Status) in a Transaction: committed when it succeeds,
// rolled back when it fails or the commit fails.
template <class F>
auto in_transaction(Database& db, F&& work) -> std::invoke_result_t<F&> {
  Transaction tx(db);
  if (!tx.begun()) return std::unexpected(tx.begun().error());
  auto result = work();
  if (!result) return result;
  if (auto committed = tx.commit(); !committed) return std::unexpected(committed.error());
  return result;
}

}  // namespace takosumi::controlplane
