#pragma once
// Creates the control plane's tables on start (idempotent). StateVersions are append-only: the
// schema refuses UPDATE and DELETE on them and keeps (capsule, generation) unique.
// The schema version lives in PRAGMA user_version (2 now). A database of the first release (no
// user_version, tables present) is migrated in place in one transaction; a database newer than
// this binary is refused with config_invalid.
#include "common/error.hpp"
#include "controlplane/sqlite_db.hpp"

namespace takosumi::controlplane {

Status create_schema(Database& db);

}  // namespace takosumi::controlplane
