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
// - A connection found broken is reset before the next statement outside a transaction; a
//   statement that fails because the server went away is `unavailable`.
#include <libpq-fe.h>

#include <spdlog/spdlog.h>

#include <charconv>
#include <cstring>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "controlplane/store/database.hpp"
#include "controlplane/store/postgres_sql.hpp"

namespace takosumi::controlplane {
namespace {

// "takosumi" in ASCII: the one advisory lock key of the control plane's writers.
constexpr std::int64_t kWriteLockKey = 0x74616b6f73756d69;
constexpr std::string_view kBeginWriter = "BEGIN; SELECT pg_advisory_xact_lock(8386102107563191657)";
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
  std::string_view code = errc::kInternal;
  if (state && std::string_view(state).starts_with("23")) code = errc::kConflict;
  // Class 08 (connection exception), 57P01..03 (shutdown), or no result at all: the server went away.
  if (!result || PQstatus(conn) == CONNECTION_BAD ||
      (state && (std::string_view(state).starts_with("08") ||
                 std::string_view(state).starts_with("57P"))))
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
    // libpq sends text parameters NUL-terminated: a NUL inside would silently cut the value.
    if (text.find('\0') != std::string_view::npos)
      return fail(errc::kInvalidArgument, "postgresql: bind: a text value holds a NUL byte");
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
  explicit PostgresConnection(PGconn* conn) : conn_(conn) {
    // CREATE … IF NOT EXISTS and friends send notices; libpq would print them on stderr.
    PQsetNoticeProcessor(conn_, [](void*, const char* message) {
      spdlog::debug("postgresql: {}", message);
    }, nullptr);
  }
  ~PostgresConnection() override { PQfinish(conn_); }
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  StoreDriver driver() const override { return StoreDriver::postgres; }

  Status exec(std::string_view sql) override {
    TAKOSUMI_TRY(usable());
    ResultPtr r(PQexec(conn_, std::string(sql).c_str()));
    return checked(r.get(), "exec");
  }

  Result<std::unique_ptr<StatementBackend>> prepare(std::string_view sql) override {
    TAKOSUMI_TRY(usable());
    auto translated = to_postgres_parameters(sql);
    if (!translated) return std::unexpected(translated.error());
    return std::make_unique<PostgresStatement>(*this, std::move(*translated));
  }

  std::int64_t changes() const override { return changes_; }

  bool in_transaction() const override {
    const auto status = PQtransactionStatus(conn_);
    return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
  }

  // A lock that does not come (lock_timeout) must not leave the BEGIN behind.
  Status begin() override {
    auto begun = exec(kBeginWriter);
    if (!begun && in_transaction()) (void)exec("ROLLBACK");
    return begun;
  }

  // Runs one translated statement; a write outside a transaction takes the writers' lock in a
  // transaction of its own.
  Result<ResultPtr> execute(const PostgresSql& sql, const std::vector<std::optional<std::string>>& values,
                            const std::vector<bool>& integer) {
    TAKOSUMI_TRY(usable());
    const bool own_transaction = !sql.read_only && !in_transaction();
    if (own_transaction) TAKOSUMI_TRY(begin());
    std::vector<const char*> pointers(values.size());
    std::vector<unsigned> types(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      pointers[i] = values[i] ? values[i]->c_str() : nullptr;
      types[i] = integer[i] ? kInt8Oid : 0;
    }
    ResultPtr r(PQexecParams(conn_, sql.text.c_str(), static_cast<int>(values.size()),
                             types.data(), pointers.data(), nullptr, nullptr, 0));
    auto ok = checked(r.get(), "step");
    if (ok) {
      const char* tuples = PQcmdTuples(r.get());
      if (tuples && *tuples) changes_ = std::strtoll(tuples, nullptr, 10);
    }
    if (own_transaction) {
      auto ended = exec(ok ? "COMMIT" : "ROLLBACK");
      if (ok && !ended) return std::unexpected(ended.error());
    }
    if (!ok) return std::unexpected(ok.error());
    return r;
  }

 private:
  Status checked(const PGresult* r, std::string_view what) {
    const auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return {};
    return std::unexpected(postgres_error(conn_, r, what));
  }

  // A connection the server closed is opened again, but never mid-transaction: that
  // transaction's work is gone, and its caller must see the failure.
  Status usable() {
    if (PQstatus(conn_) == CONNECTION_OK) return {};
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) {
      spdlog::warn("postgresql: connection re-established");
      return {};
    }
    return std::unexpected(postgres_error(conn_, nullptr, "connect"));
  }

  PGconn* conn_;
  std::int64_t changes_ = 0;
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
  std::optional<std::string> password;
  if (settings.password_file) {
    auto text = read_file(*settings.password_file, 4096);
    if (!text) return std::unexpected(text.error().with_context("store.passwordFile"));
    std::string value = std::move(*text);
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
    password = std::move(value);
  }
  // The URL is libpq's own (dbname with expand_dbname): sslmode, sslrootcert, host lists and the
  // PG* environment all apply as libpq documents them.
  std::vector<const char*> keys{"dbname", "application_name", "connect_timeout"};
  std::vector<const char*> values{settings.url.c_str(), "takosumi-control", "10"};
  if (password) {
    keys.push_back("password");
    values.push_back(password->c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* raw = PQconnectdbParams(keys.data(), values.data(), 1);
  if (password) std::fill(password->begin(), password->end(), '\0');
  if (!raw) return fail(errc::kUnavailable, "postgresql: connect: out of memory");
  Database db(std::make_unique<PostgresConnection>(raw));
  if (PQstatus(raw) != CONNECTION_OK)
    return std::unexpected(postgres_error(raw, nullptr, "connect"));
  // UTC and UTF-8 whatever the server's defaults; statements never wait forever for a lock.
  TAKOSUMI_TRY(db.exec("SET client_encoding = 'UTF8'; SET TIME ZONE 'UTC';"
                       " SET lock_timeout = '30s'"));
  return db;
}

}  // namespace takosumi::controlplane
