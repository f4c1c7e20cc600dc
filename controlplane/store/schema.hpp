#pragma once
// Creates the control plane's tables on start (idempotent). StateVersions are append-only: the
// schema refuses UPDATE and DELETE on them and keeps (capsule, generation) unique.
// The schema version lives in PRAGMA user_version (7 now). A database of the first release (no
// user_version, tables present) or of version 2 to 6 is migrated in place, one transaction per
// step; a database newer than this binary is refused with config_invalid. Audit events are
// append-only like StateVersions.
#include "common/error.hpp"
#include "controlplane/store/database.hpp"

namespace takosumi::controlplane {

Status create_schema(Database& db);

}  // namespace takosumi::controlplane
