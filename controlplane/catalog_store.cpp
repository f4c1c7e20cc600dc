#include "controlplane/catalog_store.hpp"

#include "common/error_codes.hpp"
#include "controlplane/ids.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kCapsuleColumns =
    "id, workspace_id, name, git_url, ref, module_path, output_allowlist, variables, created_at,"
    " destroyed_at";

Workspace workspace_from_row(const Statement& s) {
  return Workspace{s.text(0), s.text(1), s.integer(2)};
}

Result<Capsule> capsule_from_row(const Statement& s) {
  Capsule c;
  c.id = s.text(0);
  c.workspace_id = s.text(1);
  c.name = s.text(2);
  c.source = CapsuleSource{s.text(3), s.text(4), s.text(5)};
  c.created_at = s.integer(8);
  if (!s.is_null(9)) c.destroyed_at = s.integer(9);
  auto allow = protocol::parse_object(s.text(6), 1 << 20);
  auto vars = protocol::parse_object(s.text(7), 1 << 20);
  if (!allow || !vars) return fail(errc::kInternal, "capsule " + c.id + ": stored JSON is corrupt");
  auto allowlist = allowlist_from_json(*allow);
  auto variables = variables_from_json(*vars);
  if (!allowlist) return std::unexpected(allowlist.error().with_context("capsule " + c.id));
  if (!variables) return std::unexpected(variables.error().with_context("capsule " + c.id));
  c.output_allowlist = std::move(*allowlist);
  c.variables = std::move(*variables);
  return c;
}

}  // namespace

Result<Workspace> CatalogStore::create_workspace(const std::string& name) {
  Workspace ws{new_id("ws"), name, clock_.now_unix()};
  auto st = db_.run("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)", ws.id, ws.name,
                    ws.created_at);
  if (!st && st.error().code == errc::kConflict)
    return fail(errc::kConflict, "workspace \"" + name + "\" already exists");
  if (!st) return std::unexpected(st.error());
  return ws;
}

Result<Workspace> CatalogStore::get_workspace(std::string_view id) {
  auto s = db_.query("SELECT id, name, created_at FROM workspaces WHERE id = ?", id);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail(errc::kNotFound, "workspace " + std::string(id) + " not found");
  return workspace_from_row(*s);
}

Result<std::vector<Workspace>> CatalogStore::list_workspaces() {
  auto s = db_.query("SELECT id, name, created_at FROM workspaces ORDER BY created_at, rowid");
  if (!s) return std::unexpected(s.error());
  std::vector<Workspace> out;
  for (;;) {
    auto row = s->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back(workspace_from_row(*s));
  }
}

Result<Capsule> CatalogStore::create_capsule(std::string_view workspace_id,
                                             const CapsuleRequest& req) {
  TAKOSUMI_TRY(get_workspace(workspace_id));
  Capsule c{new_id("cap"), std::string(workspace_id), req.name, req.source, req.output_allowlist,
            req.variables, clock_.now_unix()};
  auto st = db_.run(
      "INSERT INTO capsules (id, workspace_id, name, git_url, ref, module_path, output_allowlist,"
      " variables, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      c.id, c.workspace_id, c.name, c.source.git_url, c.source.ref, c.source.module_path,
      protocol::serialize(allowlist_to_json(c.output_allowlist)),
      protocol::serialize(variables_to_json(c.variables)), c.created_at);
  if (!st && st.error().code == errc::kConflict)
    return fail(errc::kConflict, "capsule \"" + req.name + "\" already exists in this workspace");
  if (!st) return std::unexpected(st.error());
  return c;
}

Result<Capsule> CatalogStore::get_capsule(std::string_view id) {
  auto s = db_.query("SELECT " + std::string(kCapsuleColumns) + " FROM capsules WHERE id = ?", id);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail(errc::kNotFound, "capsule " + std::string(id) + " not found");
  return capsule_from_row(*s);
}

Status CatalogStore::set_destroyed(std::string_view capsule_id, std::optional<std::int64_t> at) {
  return db_.run("UPDATE capsules SET destroyed_at = ? WHERE id = ?", at, capsule_id);
}

Result<std::vector<Capsule>> CatalogStore::list_capsules(std::string_view workspace_id) {
  TAKOSUMI_TRY(get_workspace(workspace_id));
  auto s = db_.query("SELECT " + std::string(kCapsuleColumns) +
                         " FROM capsules WHERE workspace_id = ? ORDER BY created_at, rowid",
                     workspace_id);
  if (!s) return std::unexpected(s.error());
  std::vector<Capsule> out;
  for (;;) {
    auto row = s->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    auto c = capsule_from_row(*s);
    if (!c) return std::unexpected(c.error());
    out.push_back(std::move(*c));
  }
}

}  // namespace takosumi::controlplane
