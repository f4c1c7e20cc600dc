#pragma once
// takosumi-control migrate-store: a SQLite installation's records copied into a PostgreSQL store
// (docs/operations.md "Moving a SQLite installation to PostgreSQL"). Every table the schema has,
// row by row in the source's insertion order, in one transaction of the target: the target holds
// all of it or none. The blobs go separately (BlobStore::share_all_local_blobs).
#include <cstdint>
#include <functional>
#include <string>

#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

struct StoreCopyReport {
  std::int64_t tables = 0;
  std::int64_t rows = 0;
  bool already_copied = false;  // the target held exactly the source's records: nothing was done
};

// source: SQLite, target: PostgreSQL, both at the current schema version. A target that holds
// records already is left alone when it holds as many of each table as the source (a second run
// of the same move), and refused (conflict) otherwise: migrate-store fills an empty store only.
// A table of the source this code does not know is refused (internal) rather than left behind.
// before_commit runs last inside the target's transaction (binding the keys, checking the blobs):
// its failure leaves the target as it was.
Result<StoreCopyReport> copy_records(Database& source, Database& target,
                                     const std::function<Status()>& before_commit = {});

// Blobs the target's records name that the target's blob tables lack ("state_versions <sha>",
// "backups <sha>"), the first few; empty when all are there. Plan and state artifacts of Runs are
// not required (an artifact's blob may have been an upload that never completed).
Result<std::string> missing_blobs(Database& target);

}  // namespace takosumi::controlplane
