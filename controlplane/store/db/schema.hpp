#pragma once
// Creates the control plane's tables on start (idempotent). StateVersions are append-only: the
// schema refuses UPDATE and DELETE on them and keeps (capsule, generation) unique.
// The schema version lives in PRAGMA user_version on SQLite, in table takosumi_schema on
// PostgreSQL (whose first version is 11). A database of the first release (no
// user_version, tables present) or of version 2 to 6 is migrated in place, one transaction per
// step; a database newer than this binary is refused with config_invalid. Audit events are
// append-only like StateVersions.
#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

// Creates or migrates to the current version (`takosumi-control migrate`; SQLite's serve too).
// On PostgreSQL it runs in one transaction under the writers' lock, so replicas that start
// together migrate once.
Status create_schema(Database& db);
// The stored version (0 for an empty database).
Result<std::int64_t> schema_version(Database& db);
// config_invalid unless the database is at exactly this binary's version, saying what to run:
// replicas on PostgreSQL never migrate by themselves (an older replica may still be serving).
Status check_schema_current(Database& db);

}  // namespace takosumi::controlplane
