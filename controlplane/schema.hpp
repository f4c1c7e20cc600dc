#pragma once
// Creates the control plane's tables on start (idempotent). StateVersions are append-only: the
// schema refuses UPDATE and DELETE on them and keeps (capsule, generation) unique.
#include "common/error.hpp"
#include "controlplane/sqlite_db.hpp"

namespace takosumi::controlplane {

Status create_schema(Database& db);

}  // namespace takosumi::controlplane
