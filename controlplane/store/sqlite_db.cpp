#include "controlplane/store/sqlite_db.hpp"

#include "common/error_codes.hpp"

namespace takosumi::controlplane {
namespace {

Error sqlite_error(sqlite3* db, int rc, std::string_view what) {
  const int primary = rc & 0xff;
  const auto code = primary == SQLITE_CONSTRAINT ? errc::kConflict : errc::kInternal;
  const char* msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return Error{std::string(code), "sqlite: " + std::string(what) + ": " + msg};
}

}  // namespace

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_status_) bind_status_ = std::unexpected(sqlite_error(db_, rc, "bind"));
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_status_) bind_status_ = std::unexpected(sqlite_error(db_, rc, "bind"));
  return *this;
}

Statement& Statement::bind(int index, std::nullopt_t) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && bind_status_) bind_status_ = std::unexpected(sqlite_error(db_, rc, "bind"));
  return *this;
}

Result<bool> Statement::step() {
  if (!bind_status_) return std::unexpected(bind_status_.error());
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return std::unexpected(sqlite_error(db_, rc, "step"));
}

Status Statement::run() {
  for (;;) {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
  }
}

std::optional<std::int64_t> Statement::optional_integer(int column) const {
  if (is_null(column)) return std::nullopt;
  return integer(column);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

Result<Database> Database::open(const std::filesystem::path& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  Database db(raw);
  if (rc != SQLITE_OK)
    return std::unexpected(sqlite_error(raw, rc, "open " + path.string()));
  sqlite3_busy_timeout(raw, 5000);
  TAKOSUMI_TRY(db.exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;"));
  return db;
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

Status Database::exec(std::string_view sql) {
  std::string owned(sql);
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &msg);
  if (rc == SQLITE_OK) return {};
  std::string text = msg ? msg : sqlite3_errstr(rc);
  sqlite3_free(msg);
  const auto code = (rc & 0xff) == SQLITE_CONSTRAINT ? errc::kConflict : errc::kInternal;
  return fail(code, "sqlite: exec: " + text);
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return std::unexpected(sqlite_error(db_, rc, "prepare"));
  return Statement(db_, stmt);
}

Transaction::Transaction(Database& db)
    : db_(db),
      nested_(db.in_transaction()),
      begun_(db.exec(nested_ ? "SAVEPOINT nested_tx" : "BEGIN IMMEDIATE")) {}

Transaction::~Transaction() {
  if (begun_ && !done_) (void)db_.exec(nested_ ? "ROLLBACK TO nested_tx; RELEASE nested_tx" : "ROLLBACK");
}

Status Transaction::commit() {
  if (!begun_) return begun_;
  done_ = true;
  auto s = db_.exec(nested_ ? "RELEASE nested_tx" : "COMMIT");
  if (!s) (void)db_.exec(nested_ ? "ROLLBACK TO nested_tx; RELEASE nested_tx" : "ROLLBACK");
  return s;
}

}  // namespace takosumi::controlplane
