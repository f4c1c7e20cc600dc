#include "controlplane/store/database.hpp"

namespace takosumi::controlplane {

Result<bool> Statement::step() {
  if (!bind_status_) return std::unexpected(bind_status_.error());
  return backend_->step();
}

Status Statement::run() {
  for (;;) {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
  }
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

std::optional<std::int64_t> Statement::optional_integer(int column) const {
  if (is_null(column)) return std::nullopt;
  return integer(column);
}

Result<Statement> Database::prepare(std::string_view sql) {
  auto backend = backend_->prepare(sql);
  if (!backend) return std::unexpected(backend.error());
  return Statement(std::move(*backend));
}

Transaction::Transaction(Database& db)
    : db_(db),
      nested_(db.in_transaction()),
      begun_(nested_ ? db.exec("SAVEPOINT nested_tx") : db.begin()) {}

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
