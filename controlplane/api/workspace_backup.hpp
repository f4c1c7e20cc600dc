#pragma once
// What a Workspace backup holds and how a restore reads it (docs/backup-and-restore.md). The
// payload is the control information the public API shows: the Workspace, its Capsules (source,
// variables, Outputs mapping, policy; the names of their Connections and sensitive variables),
// its Connections' metadata, Dependencies, OutputShares, and the Run and StateVersion history
// (metadata). Never a Connection value, a sensitive variable's value, state, plans or logs.
#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "controlplane/store/stores.hpp"

namespace takosumi::controlplane {

inline constexpr std::string_view kBackupFormat = "takosumi-workspace-backup";
inline constexpr std::int64_t kBackupVersion = 1;
// A backup document (and a restore's request body) is at most this large.
inline constexpr std::size_t kMaxBackupBytes = 64 << 20;

// The payload of a backup of the Workspace now, as JSON text.
Result<std::string> backup_payload(const Stores& stores, const Workspace& workspace,
                                   std::int64_t now);

struct RestoreOutcome {
  Workspace workspace;
  std::vector<std::string> capsule_ids;
  std::vector<std::string> dependency_ids;
  // What a restore cannot bring back here: OutputShares (the other Workspace is not here) and the
  // Dependencies that went through them.
  std::vector<std::string> skipped_output_shares;
  std::vector<std::string> skipped_dependencies;
};

// Recreates the Workspace of a verified payload with its ids, its Capsules (each marked
// connections_missing until its Connections are assigned again) and the Dependencies between
// them. The caller runs it in a transaction. conflict when the Workspace (id or name) or a Capsule
// exists here; backup_invalid for a payload that does not read.
Result<RestoreOutcome> restore_payload(const Stores& stores, const boost::json::object& payload);

// The whole restore of a backup document (its text as the source wrote it): the signature is
// checked against the source's public signing key (base64 of its keys/signing.pub; the key is
// given, never taken from the document), then in one transaction the payload is restored, the
// document kept as the Workspace's first backup (origin "restored") and workspace.restored
// audited by `actor`. Returns what the API answers: the Workspace, the new ids, what was not
// restored and what to do next. Shared by POST /api/v1/workspaces/restore and
// `takosumi-control restore`.
Result<boost::json::object> restore_workspace(const Stores& stores, const std::string& document,
                                              std::string_view source_key_base64,
                                              std::string_view actor);

}  // namespace takosumi::controlplane
