#pragma once
// Moving a Workspace's state to another control plane (docs/backup-and-restore.md), an explicit
// step apart from a backup because state is not an export. The source re-seals each
// StateVersion's data key to the destination's storage public key — it opens the key, never the
// state — and signs a bundle of the envelopes with the StateVersions' records and the Capsules'
// published Outputs. The destination checks the signature, that every data key opens with its
// own storage key, and appends the StateVersions with their ids and generations.
#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "controlplane/store/stores.hpp"
#include "crypto/keys.hpp"

namespace takosumi::controlplane {

inline constexpr std::string_view kStateTransferFormat = "takosumi-state-transfer";
inline constexpr std::int64_t kStateTransferVersion = 1;

// The payload (JSON text) of a transfer of every StateVersion of the Workspace's Capsules to the
// control plane whose storage public key is `to`. payload_too_large past kMaxBackupBytes.
Result<std::string> state_transfer_payload(const Stores& stores, const Workspace& workspace,
                                           const crypto::BoxPublicKey& to, std::int64_t now);

struct ImportOutcome {
  std::vector<std::string> state_version_ids;  // appended now
  int already_present = 0;                     // a second import of the same bundle
};

// Appends the payload's StateVersions to the Workspace's Capsules here (which a restore
// recreated). The caller verified the signature and runs this in a transaction.
// backup_invalid for a payload that does not read or is meant for another key or Workspace;
// envelope_wrong_key when a data key does not open here; conflict when a Capsule already has
// other state.
Result<ImportOutcome> import_state_transfer(const Stores& stores, const std::string& workspace_id,
                                            const boost::json::object& payload);

}  // namespace takosumi::controlplane
