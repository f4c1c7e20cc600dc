#pragma once
// The control plane's keys, bound to its store: the first control plane to serve a store records
// the public halves of its storage and signing keys; every later one (a restart, another replica
// on the same PostgreSQL database) must hold the same keys. A replica with other keys would sign
// manifests agents refuse and could not open the StateVersions the others stored.
#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"
#include "controlplane/store/keys/keyring.hpp"

namespace takosumi::controlplane {

// Records the keys in a store that has none; config_invalid when the store's are others, saying
// which key differs and what to do.
Status bind_keys(Database& db, const Keyring& keys);

}  // namespace takosumi::controlplane
