#pragma once
// The control plane's database seam: one connection of a driver (SQLite for one host, PostgreSQL
// for replicas sharing one database), prepared statements with bound parameters, and transactions
// that roll back unless committed. The stores write one SQL dialect, the common ground of both
// (`?` parameters, `?1` reused, ON CONFLICT, IS DISTINCT FROM, a `rowid` on every table ordered by
// insertion); each driver adapts what it must (sqlite_driver, postgres_driver).
// Not thread-safe: a control plane touches its connection from its one io_context thread only.
// Errors: a violated constraint is `conflict`; a lost PostgreSQL connection is `unavailable`;
// anything else is `internal` with the driver's message.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/error_codes.hpp"

namespace takosumi::controlplane {

enum class StoreDriver { sqlite, postgres };

// How a transaction shares the database with other writers.
// - exclusive: the only writer on the whole database while it lasts (every store's read, decide,
//   write stays exact on several replicas).
// - claim: a claim of Runs (run_claims.cpp). On PostgreSQL, claims run side by side, on every
//   replica, while no exclusive writer does; they keep out of each other's way with row locks
//   (the Capsule of the Run each leases, FOR NO KEY UPDATE … SKIP LOCKED). A claim may write only
//   the Runs of Capsules it has locked, and audit records. On SQLite it is exclusive.
enum class WriterLock { exclusive, claim };

// One prepared statement as a driver runs it. Parameters are 1-based; columns 0-based.
class StatementBackend {
 public:
  virtual ~StatementBackend() = default;
  virtual Status bind_text(int index, std::string_view text) = 0;
  virtual Status bind_integer(int index, std::int64_t value) = 0;
  // A NULL in place of a value of some type; `integer`: of an integer (PostgreSQL must know a
  // parameter's type when its use does not say, as in `? IS NULL`).
  virtual Status bind_null(int index, bool integer) = 0;
  // True when a row is available; false when the statement is done.
  virtual Result<bool> step() = 0;
  virtual bool is_null(int column) const = 0;
  virtual std::string text(int column) const = 0;
  virtual std::int64_t integer(int column) const = 0;
};

// One connection as a driver keeps it.
class ConnectionBackend {
 public:
  virtual ~ConnectionBackend() = default;
  virtual StoreDriver driver() const = 0;
  // Runs one or more statements with no parameters and no rows (schema, transaction control).
  virtual Status exec(std::string_view sql) = 0;
  virtual Result<std::unique_ptr<StatementBackend>> prepare(std::string_view sql) = 0;
  // Rows changed by the last INSERT, UPDATE or DELETE.
  virtual std::int64_t changes() const = 0;
  virtual bool in_transaction() const = 0;
  // Starts the outermost transaction as a writer: an exclusive one is the only writer on the whole
  // database (SQLite: BEGIN IMMEDIATE; PostgreSQL: BEGIN and the control plane's write lock);
  // claims share that lock with each other on PostgreSQL (WriterLock).
  virtual Status begin(WriterLock lock) = 0;
  // Ends the outermost transaction. commit() fails when the database did not commit (PostgreSQL
  // ends a transaction in which a statement failed with a rollback, whatever COMMIT asked).
  virtual Status commit() = 0;
  virtual void rollback() = 0;
};

class Statement {
 public:
  explicit Statement(std::unique_ptr<StatementBackend> backend) : backend_(std::move(backend)) {}
  // A bind that failed stays with the statement: step() reports it wherever the statement went.
  Statement(Statement&& other) noexcept = default;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite. Text holding a NUL byte is refused (invalid_argument)
  // on every driver, since PostgreSQL's text cannot hold one: tool output goes in through
  // without_nul().
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::int64_t value) { return keep(backend_->bind_integer(index, value)); }
  Statement& bind(int index, int value) { return bind(index, std::int64_t{value}); }
  Statement& bind(int index, bool value) { return bind(index, std::int64_t{value ? 1 : 0}); }
  Statement& bind(int index, std::nullopt_t) { return keep(backend_->bind_null(index, false)); }
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    if (value) return bind(index, *value);
    return keep(backend_->bind_null(index, std::is_integral_v<T>));
  }

  // True when a row is available; false when the statement is done.
  Result<bool> step();
  // Steps to completion, for statements that return no rows.
  Status run();

  bool is_null(int column) const { return backend_->is_null(column); }
  std::string text(int column) const { return backend_->text(column); }
  std::optional<std::string> optional_text(int column) const;
  std::int64_t integer(int column) const { return backend_->integer(column); }
  std::optional<std::int64_t> optional_integer(int column) const;

 private:
  Statement& keep(Status bound) {
    if (!bound && bind_status_) bind_status_ = std::move(bound);
    return *this;
  }

  std::unique_ptr<StatementBackend> backend_;
  Status bind_status_;
};

// Text from outside (tool output, an agent's failure message) as the store keeps it: each NUL
// byte becomes U+FFFD.
std::string without_nul(std::string_view text);

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

// Where the store lives: a SQLite file, or a PostgreSQL database by libpq connection URI
// (postgresql://user@host:port/db?sslmode=verify-full; PGPASSFILE and the other PG* variables
// apply) with its password optionally read from a file.
// config_invalid unless libpq can parse url (its own message, which may quote the URL with its
// password, is dropped).
Status check_postgres_url(std::string_view url);

struct PostgresSettings {
  std::string url;
  std::optional<std::filesystem::path> password_file;
  // false: writes outside a transaction take no writers' lock. Only for the blob store's own
  // connection, whose rows are content-addressed and written idempotently: it must never wait for
  // the lock that the main connection's transaction holding it is waiting on the blob for.
  bool writers_lock = true;
};

class Database {
 public:
  // Opens (creating) the file, enables WAL and foreign keys, sets a busy timeout.
  static Result<Database> open_sqlite(const std::filesystem::path& path);
  // Connects; a refused or unreachable server is `unavailable` with libpq's reason.
  static Result<Database> connect_postgres(const PostgresSettings& settings);
  explicit Database(std::unique_ptr<ConnectionBackend> backend) : backend_(std::move(backend)) {}
  Database(Database&& other) noexcept = default;
  Database& operator=(Database&&) = delete;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  StoreDriver driver() const { return backend_->driver(); }
  Status exec(std::string_view sql) { return backend_->exec(sql); }
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
  std::int64_t changes() const { return backend_->changes(); }
  bool in_transaction() const { return backend_->in_transaction(); }
  // True inside a claim's transaction on PostgreSQL, where claims run side by side and must lock
  // the rows they lease.
  bool in_shared_claim() const {
    return in_transaction() && lock_ == WriterLock::claim && driver() == StoreDriver::postgres;
  }
  Status begin(WriterLock lock = WriterLock::exclusive) {
    lock_ = lock;
    return backend_->begin(lock);
  }
  Status commit() { return backend_->commit(); }
  void rollback() { backend_->rollback(); }

 private:
  std::unique_ptr<ConnectionBackend> backend_;
  WriterLock lock_ = WriterLock::exclusive;
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

// Begins a writer's transaction on construction (check begun()); rolls back in the destructor
// unless committed.
// Inside another Transaction it is a SAVEPOINT instead, so an action and the audit record written
// beside it can share one transaction while the stores keep their own. An exclusive one inside a
// claim's shared transaction is refused (internal): it would decide on reads other claims may be
// changing.
class Transaction {
 public:
  explicit Transaction(Database& db, WriterLock lock = WriterLock::exclusive);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  const Status& begun() const { return begun_; }
  Status commit();

 private:
  void roll_back();

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
