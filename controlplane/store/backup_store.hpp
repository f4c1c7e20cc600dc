#pragma once
// The Workspace backups a control plane made or restored from (docs/backup-and-restore.md). A
// row describes one; the signed document itself is a blob (BlobStore), named by its SHA-256.
// Errors: not_found for unknown ids.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

struct Backup {
  std::string id;
  std::string workspace_id;
  std::string origin;  // "created" here, or "restored" from (the document a restore read)
  std::string created_by;
  std::int64_t created_at = 0;
  std::string sha256;  // of the document, the blob's name
  std::int64_t size = 0;
};

class BackupStore {
 public:
  BackupStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // Assigns id and created_at.
  Result<Backup> create(Backup backup);
  Result<Backup> get(std::string_view id);
  // Newest first.
  Result<std::vector<Backup>> list(std::string_view workspace_id);

 private:
  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
