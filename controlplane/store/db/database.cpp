#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

Statement& Statement::bind(int index, std::string_view text) {
  if (text.find('\0') != std::string_view::npos)
    return keep(fail(errc::kInvalidArgument,
                     "a text value holds a NUL byte (parameter " + std::to_string(index) + ")"));
  return keep(backend_->bind_text(index, text));
}

std::string without_nul(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\0')
      out += "\xEF\xBF\xBD";
    else
      out += c;
  }
  return out;
}

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

namespace {
Status begin_in(Database& db, bool nested, WriterLock lock) {
  if (!nested) return db.begin(lock);
  if (lock == WriterLock::exclusive && db.in_shared_claim())
    return fail(errc::kInternal, "an exclusive writer's transaction inside a claim's");
  return db.exec("SAVEPOINT nested_tx");
}
}  // namespace

Transaction::Transaction(Database& db, WriterLock lock)
    : db_(db), nested_(db.in_transaction()), begun_(begin_in(db, nested_, lock)) {}

void Transaction::roll_back() {
  if (nested_)
    (void)db_.exec("ROLLBACK TO nested_tx; RELEASE nested_tx");
  else
    db_.rollback();
}

Transaction::~Transaction() {
  if (begun_ && !done_) roll_back();
}

Status Transaction::commit() {
  if (!begun_) return begun_;
  done_ = true;
  if (!nested_) return db_.commit();
  auto s = db_.exec("RELEASE nested_tx");
  if (!s) roll_back();
  return s;
}

}  // namespace takosumi::controlplane
