#include "controlplane/store/keys/key_binding.hpp"

#include "common/error_codes.hpp"

namespace takosumi::controlplane {

Status bind_keys(Database& db, const Keyring& keys) {
  const std::string storage = keys.storage_public_key().to_base64();
  const std::string signing = keys.signing_key().public_key.to_base64();
  return in_transaction(db, [&]() -> Status {
    auto s = db.query("SELECT storage_public_key, signing_public_key FROM control_plane_keys");
    if (!s) return std::unexpected(s.error());
    auto row = s->step();
    if (!row) return std::unexpected(row.error());
    if (!*row)
      return db.run("INSERT INTO control_plane_keys (storage_public_key, signing_public_key)"
                    " VALUES (?, ?)",
                    storage, signing);
    std::string bound_storage, bound_signing;
    ColumnReader(*s) >> bound_storage >> bound_signing;
    if (bound_storage == storage && bound_signing == signing) return {};
    const std::string which = bound_storage != storage ? "storage" : "signing";
    return fail(errc::kConfigInvalid,
                "this control plane's " + which + " key (dataDir/keys) is not the one the store "
                "is bound to (" + which + " public key " +
                (which == "storage" ? bound_storage : bound_signing) +
                "): every replica of one store needs the same keys/ directory; copy it from a "
                "replica that serves this store (docs/operations.md, Scaling out); if a "
                "`takosumi-control rotate-keys` was interrupted on this host, run it again");
  });
}

}  // namespace takosumi::controlplane
