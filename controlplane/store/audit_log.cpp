#include "controlplane/store/audit_log.hpp"

#include <limits>

#include "crypto/random_ids.hpp"
#include "common/json_fields.hpp"

namespace takosumi::controlplane {
namespace {

AuditEvent event_from_row(const Statement& s) {
  AuditEvent e;
  std::string detail;
  ColumnReader(s) >> e.id >> e.at >> e.actor >> e.action >> e.workspace_id >> e.capsule_id >>
      e.run_id >> e.connection_id >> detail;
  // Written by record() below; an unreadable detail is shown empty rather than hiding the event.
  if (auto parsed = parse_object(detail, 1 << 20)) e.detail = std::move(*parsed);
  return e;
}

}  // namespace

std::string agent_actor(std::string_view agent_id) { return "agent:" + std::string(agent_id); }

namespace {

AuditEvent event(std::string_view actor, std::string_view action, std::string workspace_id,
                 std::string capsule_id, boost::json::object detail) {
  AuditEvent e;
  e.actor = std::string(actor);
  e.action = std::string(action);
  e.workspace_id = std::move(workspace_id);
  e.capsule_id = std::move(capsule_id);
  e.detail = std::move(detail);
  return e;
}

}  // namespace

AuditEvent run_event(std::string_view actor, std::string_view action, const Run& run,
                     boost::json::object detail) {
  AuditEvent e = event(actor, action, run.workspace_id, run.capsule_id, std::move(detail));
  e.run_id = run.id;
  return e;
}

AuditEvent capsule_event(std::string_view actor, std::string_view action, const Capsule& capsule,
                         boost::json::object detail) {
  return event(actor, action, capsule.workspace_id, capsule.id, std::move(detail));
}

Status AuditLog::record(AuditEvent e) {
  return with_context(
      db_.run("INSERT INTO audit_events (at, actor, action, workspace_id, capsule_id, run_id,"
              " connection_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
              clock_.now_unix(), e.actor, e.action, e.workspace_id, e.capsule_id, e.run_id,
              e.connection_id, takosumi::serialize(e.detail)),
      "audit " + e.action);
}

Result<std::vector<AuditEvent>> AuditLog::list(std::string_view workspace_id, int limit,
                                               std::optional<std::int64_t> before) {
  auto s = db_.query(
      "SELECT id, at, actor, action, workspace_id, capsule_id, run_id, connection_id, detail"
      " FROM audit_events WHERE workspace_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
      workspace_id, before.value_or(std::numeric_limits<std::int64_t>::max()), limit);
  return collect(std::move(s), event_from_row);
}

}  // namespace takosumi::controlplane
