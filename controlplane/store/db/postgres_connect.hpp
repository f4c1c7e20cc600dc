#pragma once
// Opening a connection to the PostgreSQL store, for the driver (postgres_driver.cpp) and the
// replicas' notifications (postgres_listener.cpp): the URL checked without ever quoting it, the
// password file read, keepalives, the primary of several hosts.
#include <libpq-fe.h>

#include <memory>

#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

struct PgConnFinish {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
using PgConnPtr = std::unique_ptr<PGconn, PgConnFinish>;

// A connection in CONNECTION_OK; unavailable with libpq's reason otherwise (config_invalid for a
// URL it cannot parse or an empty password file).
Result<PgConnPtr> open_postgres_connection(const PostgresSettings& settings);

}  // namespace takosumi::controlplane
