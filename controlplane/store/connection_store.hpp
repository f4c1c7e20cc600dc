#pragma once
// Connections in SQLite: workspace-scoped provider credentials whose values are write-only. A row
// holds the credential names and the values sealed to the storage key (secret_storage.hpp); the
// values are opened only by open(), for a manifest. Errors: not_found for unknown ids, conflict
// for a name already used in the Workspace.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/connection_spec.hpp"
#include "controlplane/store/keys/keyring.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

// Why a Capsule's Runs may not use its Connections now: the first revoked or expired one.
struct ConnectionRefusal {
  std::string connection_id;
  Error error;  // connection_revoked / connection_expired, naming the Connection and the fix
};

class ConnectionStore {
 public:
  ConnectionStore(Database& db, const Keyring& keys, const Clock& clock)
      : db_(db), keys_(keys), clock_(clock) {}

  // The caller checked that the Workspace exists. Consumes the request's values.
  Result<Connection> create(ConnectionRequest req);
  Result<Connection> get(std::string_view id);
  // Oldest first, revoked and expired ones included.
  Result<std::vector<Connection>> list(std::string_view workspace_id);
  // In the order of `ids`; not_found for the first unknown one.
  Result<std::vector<Connection>> get_many(const std::vector<std::string>& ids);
  // Sets revoked_at (the first time only).
  Result<Connection> revoke(std::string_view id);
  // The first Connection assigned to the Capsule that is revoked or expired now, if any.
  Result<std::optional<ConnectionRefusal>> first_unusable(const Capsule& capsule);
  // The Connection's values, for a manifest. The sealed row must name this Connection.
  Result<protocol::ConnectionSecret> open(const Connection& connection);
  // A Connection of kind git's credential, for a manifest or the control plane's own ref
  // listing (invalid_argument for another kind).
  Result<protocol::GitCredential> open_git(const Connection& connection);

 private:
  Result<protocol::SecretBundle> open_sealed(const Connection& connection);
  Database& db_;
  const Keyring& keys_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
