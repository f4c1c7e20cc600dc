#pragma once
// The audit trail: who did what, to which Workspace, Capsule, Run or Connection, and when.
// Append-only (the schema refuses UPDATE and DELETE). Detail holds names, ids, types and codes
// only: never a request body, a secret value, a token or a failure message. Record an event in
// the same transaction as the action it describes (in_transaction), so neither exists alone.
#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

struct AuditEvent {
  std::int64_t id = 0;  // assigned when recorded; increases with every event
  std::int64_t at = 0;  // assigned when recorded
  std::string actor;
  std::string action;
  std::optional<std::string> workspace_id;
  std::optional<std::string> capsule_id;
  std::optional<std::string> run_id;
  std::optional<std::string> connection_id;
  boost::json::object detail;
};

// Actors: "admin" (the configured API token), "token:<id>" (a scoped API token),
// "agent:<agent id>", or the control plane
// itself for what it decides on its own (expired leases, Runs it refuses to dispatch).
// No fingerprint of the admin token: scoped viewers read actors, and a weak token could be
// confirmed offline from one.
inline constexpr std::string_view kAdminActor = "admin";
std::string agent_actor(std::string_view agent_id);
inline constexpr std::string_view kControlPlaneActor = "control-plane";

// An event about a Run: its Workspace, Capsule and id filled in.
AuditEvent run_event(std::string_view actor, std::string_view action, const Run& run,
                     boost::json::object detail = {});

// An event about a Capsule: its Workspace and id filled in.
AuditEvent capsule_event(std::string_view actor, std::string_view action, const Capsule& capsule,
                         boost::json::object detail = {});

class AuditLog {
 public:
  AuditLog(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  Status record(AuditEvent event);
  // The Workspace's events newest first, only those with an id below `before` when given.
  Result<std::vector<AuditEvent>> list(std::string_view workspace_id, int limit,
                                       std::optional<std::int64_t> before);

 private:
  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
