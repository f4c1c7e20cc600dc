// The SQLite driver: one file in WAL mode with foreign keys on and full fsync, the embedded
// default for one host. Its SQL is the stores' own dialect, so nothing is rewritten.
#include <sqlite3.h>

#include "common/error_codes.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {
namespace {

Error sqlite_error(sqlite3* db, int rc, std::string_view what) {
  const int primary = rc & 0xff;
  const auto code = primary == SQLITE_CONSTRAINT ? errc::kConflict : errc::kInternal;
  const char* msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return Error{std::string(code), "sqlite: " + std::string(what) + ": " + msg};
}

class SqliteStatement final : public StatementBackend {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  Status bind_text(int index, std::string_view text) override {
    return checked(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                                       SQLITE_UTF8));
  }
  Status bind_integer(int index, std::int64_t value) override {
    return checked(sqlite3_bind_int64(stmt_, index, value));
  }
  Status bind_null(int index, bool) override { return checked(sqlite3_bind_null(stmt_, index)); }

  Result<bool> step() override {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return std::unexpected(sqlite_error(db_, rc, "step"));
  }

  bool is_null(int column) const override {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  std::string text(int column) const override {
    const auto* p = sqlite3_column_text(stmt_, column);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p),
                       static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
  }
  std::int64_t integer(int column) const override { return sqlite3_column_int64(stmt_, column); }

 private:
  Status checked(int rc) const {
    if (rc == SQLITE_OK) return {};
    return std::unexpected(sqlite_error(db_, rc, "bind"));
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class SqliteConnection final : public ConnectionBackend {
 public:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  ~SqliteConnection() override { sqlite3_close_v2(db_); }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  StoreDriver driver() const override { return StoreDriver::sqlite; }

  Status exec(std::string_view sql) override {
    std::string owned(sql);
    char* msg = nullptr;
    int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &msg);
    if (rc == SQLITE_OK) return {};
    std::string text = msg ? msg : sqlite3_errstr(rc);
    sqlite3_free(msg);
    const auto code = (rc & 0xff) == SQLITE_CONSTRAINT ? errc::kConflict : errc::kInternal;
    return fail(code, "sqlite: exec: " + text);
  }

  Result<std::unique_ptr<StatementBackend>> prepare(std::string_view sql) override {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) return std::unexpected(sqlite_error(db_, rc, "prepare"));
    return std::make_unique<SqliteStatement>(db_, stmt);
  }

  std::int64_t changes() const override { return sqlite3_changes64(db_); }
  bool in_transaction() const override { return sqlite3_get_autocommit(db_) == 0; }
  // The write lock at once, so a transaction that reads before it writes never meets another
  // writer between the two (SQLITE_BUSY mid-transaction). One process writes a SQLite store, so
  // a claim is as exclusive as any writer.
  Status begin(WriterLock) override { return exec("BEGIN IMMEDIATE"); }
  Status commit() override {
    auto committed = exec("COMMIT");
    if (!committed) rollback();
    return committed;
  }
  void rollback() override {
    if (in_transaction()) (void)exec("ROLLBACK");
  }

 private:
  sqlite3* db_;
};

}  // namespace

Result<Database> Database::open_sqlite(const std::filesystem::path& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  Database db(std::make_unique<SqliteConnection>(raw));
  if (rc != SQLITE_OK)
    return std::unexpected(sqlite_error(raw, rc, "open " + path.string()));
  sqlite3_busy_timeout(raw, 5000);
  TAKOSUMI_TRY(db.exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;"));
  return db;
}

}  // namespace takosumi::controlplane
