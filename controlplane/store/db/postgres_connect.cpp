// Opening a libpq connection as the control plane wants every one of its connections.
#include "controlplane/store/db/postgres_connect.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"

namespace takosumi::controlplane {

Status check_postgres_url(std::string_view url) {
  // libpq's own parse error may quote the URL, password included: it is never passed on.
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(std::string(url).c_str(), &error);
  PQfreemem(error);
  if (!options)
    return fail(errc::kConfigInvalid,
                "store.url is not a libpq connection URI (postgresql://user@host:5432/db?"
                "sslmode=verify-full; percent-encode special characters)");
  PQconninfoFree(options);
  return {};
}

Result<PgConnPtr> open_postgres_connection(const PostgresSettings& settings) {
  TAKOSUMI_TRY(check_postgres_url(settings.url));
  // Read once: libpq keeps it for its reconnects, so a rotated file takes effect at the next
  // start. An empty file would make libpq fall back to other sources silently: refused.
  std::optional<std::string> password;
  if (settings.password_file) {
    auto text = read_file(*settings.password_file, 4096);
    if (!text) return std::unexpected(text.error().with_context("store.passwordFile"));
    std::string value = std::move(*text);
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
    if (value.empty())
      return fail(errc::kConfigInvalid,
                  "store.passwordFile " + settings.password_file->string() + " is empty");
    password = std::move(value);
  }
  // The URL is libpq's own (dbname with expand_dbname): sslmode, sslrootcert, host lists and the
  // PG* environment all apply as libpq documents them. It comes last, so what it says overrides
  // the defaults before it (libpq keeps the last value of a repeated keyword); the password file
  // comes after it, so a configured file is what is used.
  // Keepalives and tcp_user_timeout: a server gone without a word (a failed-over host) is
  // noticed in about a minute, idle or mid-statement, instead of the kernel's two hours or
  // fifteen minutes. read-write: of several hosts, the primary (a standby refuses writes).
  std::vector<const char*> keys{"application_name", "connect_timeout", "keepalives",
                                "keepalives_idle", "keepalives_interval", "keepalives_count",
                                "tcp_user_timeout", "target_session_attrs", "client_encoding",
                                "dbname"};
  std::vector<const char*> values{"takosumi-control", "10", "1", "30", "10", "3", "60000",
                                  "read-write", "UTF8", settings.url.c_str()};
  if (password) {
    keys.push_back("password");
    values.push_back(password->c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PgConnPtr conn(PQconnectdbParams(keys.data(), values.data(), 1));
  // Our copy only (libpq keeps its own for reconnects).
  if (password) std::fill(password->begin(), password->end(), '\0');
  if (!conn) return fail(errc::kUnavailable, "postgresql: connect: out of memory");
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn.get());
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return fail(errc::kUnavailable, "postgresql: connect: " + message);
  }
  return conn;
}

}  // namespace takosumi::controlplane
