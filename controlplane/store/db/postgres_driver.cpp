// The PostgreSQL driver (libpq): the store of control-plane replicas that share one database.
//
// The stores' SQL is SQLite's dialect where both agree; this driver adapts the rest:
// - `?` parameters become `$1, $2, …` and `?N` becomes `$N` (outside quotes and comments).
// - Parameters travel as text; an integer is sent typed (int8) so it compares with BIGINT
//   columns, text is left for the server to type from its use.
// - Results arrive as text and are read back as the stores expect (`t`/`f` as 1/0).
// - Writers are one at a time across every replica, as SQLite's single writer is on one host: a
//   transaction takes one transaction-level advisory lock at BEGIN, and a write outside a
//   transaction runs in a transaction of its own that takes it too. Reads never wait for it.
//   The stores were written for a single writer (read, decide, write in one transaction); this
//   keeps every one of those decisions exact on several replicas without rewriting each one.
//   Claims, the one write every poll of every agent makes, share that lock instead
//   (WriterLock::claim): they run side by side and lock the Capsule rows they lease from
//   (run_claims.cpp), while every other writer still waits for them all and they for it.
// - A connection found broken is reset before the next statement outside a transaction; a
//   statement that fails because the server went away is `unavailable`.
#include <libpq-fe.h>

#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <cstring>

#include "common/error_codes.hpp"
#include "controlplane/store/db/database.hpp"
#include "controlplane/store/db/postgres_connect.hpp"
#include "controlplane/store/db/postgres_sql.hpp"

namespace takosumi::controlplane {
namespace {

// "takosumi" in ASCII: the one advisory lock key of the control plane's writers.
constexpr std::int64_t kWriteLockKey = 0x74616b6f73756d69;
constexpr std::string_view kBeginWriter =
    "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(8386102107563191657)";
constexpr std::string_view kBeginClaim =
    "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock_shared(8386102107563191657)";
static_assert(kWriteLockKey == 8386102107563191657);
constexpr unsigned kInt8Oid = 20;  // pg_type.h: INT8OID

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// Integrity violations (class 23: unique, foreign key, check, not null, and our append-only
// trigger) are conflicts, as SQLite's constraint errors are.
Error postgres_error(PGconn* conn, const PGresult* result, std::string_view what) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = result ? PQresultErrorMessage(result) : PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const std::string_view sqlstate = state ? state : "";
  std::string_view code = errc::kInternal;
  if (sqlstate.starts_with("23")) code = errc::kConflict;
  // The server went away (class 08, 57P01..03 shutdown, no result at all) or is busy for now: a
  // lock not had in lock_timeout (55P03), a deadlock or serialization failure (40P01, 40001), a
  // statement cancelled by a timeout (57014), too many connections (53300). The caller may retry
  // all of these; none of them is a fault of the request.
  // So is a server short of resources (class 53: disk full, out of memory, too many
  // connections), failing at the system level (class 58: I/O), or a standby that a failover
  // left us on (25006: read only; the connection is reset, see usable()).
  if (!result || PQstatus(conn) == CONNECTION_BAD || sqlstate.starts_with("08") ||
      sqlstate.starts_with("57P") || sqlstate.starts_with("53") || sqlstate.starts_with("58") ||
      sqlstate == "55P03" || sqlstate == "40P01" || sqlstate == "40001" || sqlstate == "57014" ||
      sqlstate == "25006")
    code = errc::kUnavailable;
  return Error{std::string(code), "postgresql: " + std::string(what) + ": " + message};
}

class PostgresConnection;

class PostgresStatement final : public StatementBackend {
 public:
  PostgresStatement(PostgresConnection& conn, PostgresSql sql)
      : conn_(conn), sql_(std::move(sql)), values_(sql_.parameters), integer_(sql_.parameters) {}

  Status bind_text(int index, std::string_view text) override {
    TAKOSUMI_TRY(check_index(index));
    // libpq sends text NUL-terminated: Statement::bind has refused a NUL inside already.
    values_[index - 1] = std::string(text);
    integer_[index - 1] = false;
    return {};
  }
  Status bind_integer(int index, std::int64_t value) override {
    TAKOSUMI_TRY(check_index(index));
    values_[index - 1] = std::to_string(value);
    integer_[index - 1] = true;
    return {};
  }
  Status bind_null(int index, bool integer) override {
    TAKOSUMI_TRY(check_index(index));
    values_[index - 1].reset();
    integer_[index - 1] = integer;
    return {};
  }

  Result<bool> step() override;

  bool is_null(int column) const override {
    return PQgetisnull(result_.get(), row_, column) != 0;
  }
  std::string text(int column) const override {
    return std::string(PQgetvalue(result_.get(), row_, column),
                       static_cast<std::size_t>(PQgetlength(result_.get(), row_, column)));
  }
  std::int64_t integer(int column) const override {
    const char* v = PQgetvalue(result_.get(), row_, column);
    const auto length = static_cast<std::size_t>(PQgetlength(result_.get(), row_, column));
    if (length == 1 && (v[0] == 't' || v[0] == 'f')) return v[0] == 't' ? 1 : 0;  // a boolean
    std::int64_t out = 0;
    std::from_chars(v, v + length, out);  // a numeric's fraction is cut off, as SQLite's is
    return out;
  }

 private:
  Status check_index(int index) const {
    if (index >= 1 && index <= sql_.parameters) return {};
    return fail(errc::kInternal, "postgresql: bind: parameter " + std::to_string(index) +
                                     " out of range (the statement has " +
                                     std::to_string(sql_.parameters) + ")");
  }

  PostgresConnection& conn_;
  PostgresSql sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<bool> integer_;
  ResultPtr result_;
  int row_ = -1;
  int rows_ = 0;
};

class PostgresConnection final : public ConnectionBackend {
 public:
  PostgresConnection(PGconn* conn, bool writers_lock) : conn_(conn), writers_lock_(writers_lock) {
    // CREATE … IF NOT EXISTS and friends send notices; libpq would print them on stderr.
    PQsetNoticeProcessor(conn_, [](void*, const char* message) {
      spdlog::debug("postgresql: {}", message);
    }, nullptr);
    // The primary message only: DETAIL lines quote row values ("Failing row contains …"),
    // which must not travel in an error answer to a client.
    PQsetErrorVerbosity(conn_, PQERRORS_TERSE);
  }
  ~PostgresConnection() override { PQfinish(conn_); }
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  StoreDriver driver() const override { return StoreDriver::postgres; }

  // What every session needs, set again after a reconnect (a new session forgets SET):
  // UTC, and no statement waits forever for a lock, and a replica that stalls inside a
  // transaction does not hold the writers' lock for longer than a minute.
  Status configure_session() {
    if (const char* encoding = PQparameterStatus(conn_, "server_encoding");
        !encoding || std::string_view(encoding) != "UTF8")
      return fail(errc::kInvalidArgument,
                  std::string("postgresql: the database's encoding is ") +
                      (encoding ? encoding : "unknown") +
                      ": takosumi needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8')");
    TAKOSUMI_TRY(exec_here("SET client_encoding = 'UTF8'; SET TIME ZONE 'UTC';"
                           " SET lock_timeout = '30s'; SET idle_in_transaction_session_timeout = '60s'"));
    session_ready_ = true;
    return {};
  }

  Status exec(std::string_view sql) override {
    TAKOSUMI_TRY(usable());
    return exec_here(sql);
  }

  Result<std::unique_ptr<StatementBackend>> prepare(std::string_view sql) override {
    TAKOSUMI_TRY(usable());
    auto translated = to_postgres_parameters(sql);
    if (!translated) return std::unexpected(translated.error());
    return std::make_unique<PostgresStatement>(*this, std::move(*translated));
  }

  std::int64_t changes() const override { return changes_; }

  // Kept by the driver, not asked of libpq: a connection lost mid-transaction reports no
  // transaction, and the Transaction that owns it must still see one (and fail) until it ends.
  bool in_transaction() const override { return transaction_open_; }

  // READ COMMITTED, stated rather than inherited from the server's default: with the writers'
  // lock held, every read sees what the writer before committed.
  // A lock that does not come (lock_timeout) must not leave the BEGIN behind.
  Status begin(WriterLock lock) override {
    if (transaction_open_) return fail(errc::kInternal, "postgresql: begin inside a transaction");
    auto begun = exec(lock == WriterLock::claim ? kBeginClaim : kBeginWriter);
    if (!begun) {
      end_server_transaction();
      return begun;
    }
    transaction_open_ = true;
    return {};
  }

  Status commit() override {
    if (!transaction_open_) return fail(errc::kInternal, "postgresql: commit outside a transaction");
    transaction_open_ = false;
    // Never reconnect here: a COMMIT on a new session commits nothing and says it did.
    if (PQstatus(conn_) != CONNECTION_OK)
      return fail(errc::kUnavailable, "postgresql: commit: the connection was lost inside the "
                                      "transaction; nothing of it was committed");
    ResultPtr r(PQexec(conn_, "COMMIT"));
    if (auto ok = checked(r.get(), "commit"); !ok) {
      end_server_transaction();  // never leave the session inside it, holding the writers' lock
      return ok;
    }
    // A transaction in which a statement failed ends in ROLLBACK whatever COMMIT asked.
    if (std::string_view(PQcmdStatus(r.get())) != "COMMIT")
      return fail(errc::kInternal,
                  "postgresql: commit: the transaction was rolled back (a statement in it failed)");
    return {};
  }

  void rollback() override {
    transaction_open_ = false;
    end_server_transaction();
  }

  // Runs one translated statement; a write outside a transaction takes the writers' lock in a
  // transaction of its own.
  Result<ResultPtr> execute(const PostgresSql& sql, const std::vector<std::optional<std::string>>& values,
                            const std::vector<bool>& integer) {
    TAKOSUMI_TRY(usable());
    const bool own_transaction = !sql.read_only && !transaction_open_ && writers_lock_;
    if (own_transaction) TAKOSUMI_TRY(begin(WriterLock::exclusive));
    std::vector<const char*> pointers(values.size());
    std::vector<unsigned> types(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      pointers[i] = values[i] ? values[i]->c_str() : nullptr;
      types[i] = integer[i] ? kInt8Oid : 0;
    }
    ResultPtr r(PQexecParams(conn_, sql.text.c_str(), static_cast<int>(values.size()),
                             types.data(), pointers.data(), nullptr, nullptr, 0));
    auto ok = checked(r.get(), "step");
    // As SQLite's changes(): the rows of the last INSERT, UPDATE or DELETE; a SELECT leaves it.
    if (ok && !sql.read_only) {
      const char* tuples = PQcmdTuples(r.get());
      changes_ = tuples && *tuples ? std::strtoll(tuples, nullptr, 10) : 0;
    }
    if (own_transaction) {
      if (!ok) {
        rollback();
        return std::unexpected(ok.error());
      }
      TAKOSUMI_TRY(commit());
    }
    if (!ok) return std::unexpected(ok.error());
    return r;
  }

 private:
  Status checked(const PGresult* r, std::string_view what) {
    const auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return {};
    // A standby (read only): the next statement outside a transaction connects again, which
    // target_session_attrs=read-write sends to the primary.
    if (const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
        state && std::string_view(state) == "25006")
      session_ready_ = false;
    return std::unexpected(postgres_error(conn_, r, what));
  }

  // On this session as it is (no reconnect).
  Status exec_here(std::string_view sql) {
    ResultPtr r(PQexec(conn_, std::string(sql).c_str()));
    return checked(r.get(), "exec");
  }

  // Whatever the server still holds open for this session ends (a failed BEGIN, a rollback).
  void end_server_transaction() {
    if (PQstatus(conn_) != CONNECTION_OK) return;
    if (PQtransactionStatus(conn_) == PQTRANS_IDLE) return;
    ResultPtr(PQexec(conn_, "ROLLBACK"));
  }

  // A connection the server closed is opened again, but never mid-transaction: that
  // transaction's work is gone, and its caller must see the failure until it ends it.
  // A session whose settings did not take (configure_session failed after a reconnect) is not
  // used as it is: it is opened again too. While the server stays away, a reconnect is tried at
  // most once a second, so a statement fails at once instead of waiting connect_timeout each.
  Status usable() {
    if (PQstatus(conn_) == CONNECTION_OK && session_ready_) return {};
    if (transaction_open_)
      return fail(errc::kUnavailable, "postgresql: the connection was lost inside a transaction");
    const auto now = std::chrono::steady_clock::now();
    if (now < next_reset_)
      return fail(errc::kUnavailable, "postgresql: the server is unreachable (retrying)");
    next_reset_ = now + std::chrono::seconds(1);
    session_ready_ = false;
    PQreset(conn_);
    if (PQstatus(conn_) != CONNECTION_OK)
      return std::unexpected(postgres_error(conn_, nullptr, "connect"));
    spdlog::warn("postgresql: connection re-established");
    return configure_session();
  }

  PGconn* conn_;
  bool writers_lock_;
  bool session_ready_ = false;
  std::chrono::steady_clock::time_point next_reset_{};
  std::int64_t changes_ = 0;
  bool transaction_open_ = false;
};

Result<bool> PostgresStatement::step() {
  if (!result_) {
    auto r = conn_.execute(sql_, values_, integer_);
    if (!r) return std::unexpected(r.error());
    result_ = std::move(*r);
    rows_ = PQntuples(result_.get());
    row_ = 0;
    return row_ < rows_;
  }
  if (row_ < rows_) ++row_;
  return row_ < rows_;
}

}  // namespace

Result<Database> Database::connect_postgres(const PostgresSettings& settings) {
  auto raw = open_postgres_connection(settings);
  if (!raw) return std::unexpected(raw.error());
  auto connection = std::make_unique<PostgresConnection>(raw->release(), settings.writers_lock);
  TAKOSUMI_TRY(connection->configure_session());
  return Database(std::move(connection));
}

}  // namespace takosumi::controlplane
