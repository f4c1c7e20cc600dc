#include "controlplane/store/backup_store.hpp"

#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kSelect =
    "SELECT id, workspace_id, origin, created_by, created_at, sha256, size FROM backups";

Backup backup_from_row(const Statement& s) {
  Backup b;
  ColumnReader(s) >> b.id >> b.workspace_id >> b.origin >> b.created_by >> b.created_at >>
      b.sha256 >> b.size;
  return b;
}

}  // namespace

Result<Backup> BackupStore::create(Backup b) {
  b.id = crypto::new_id("bkp");
  b.created_at = clock_.now_unix();
  TAKOSUMI_TRY(db_.run("INSERT INTO backups (id, workspace_id, origin, created_by, created_at,"
                       " sha256, size) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       b.id, b.workspace_id, b.origin, b.created_by, b.created_at, b.sha256,
                       b.size));
  return b;
}

Result<Backup> BackupStore::get(std::string_view id) {
  return one_row(db_.query(std::string(kSelect) + " WHERE id = ?", id),
                 "backup " + std::string(id), backup_from_row);
}

Result<std::vector<Backup>> BackupStore::list(std::string_view workspace_id) {
  return collect(db_.query(std::string(kSelect) +
                               " WHERE workspace_id = ? ORDER BY created_at DESC, rowid DESC",
                           workspace_id),
                 backup_from_row);
}

}  // namespace takosumi::controlplane
