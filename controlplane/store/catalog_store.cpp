#include "controlplane/store/catalog_store.hpp"

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "controlplane/store/agent_pool_store.hpp"
#include "controlplane/store/db/stored_names.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

Workspace workspace_from_row(const Statement& s) {
  Workspace w;
  ColumnReader(s) >> w.id >> w.name >> w.created_at;
  return w;
}

constexpr std::string_view kCapsuleColumns =
    "id, workspace_id, name, git_url, ref, module_path, output_allowlist, variables, created_at,"
    " destroyed_at, sensitive_variable_names, policy, restore_pending, state_pending, agent_pool,"
    " agent_labels, opentofu_version, git_connection_id, spec_revision";

Result<Capsule> capsule_from_row(const Statement& s) {
  Capsule c;
  std::string allow_text, vars_text, sensitive_text, policy_text, labels_text;
  ColumnReader(s) >> c.id >> c.workspace_id >> c.name >> c.source.git_url >> c.source.ref >>
      c.source.module_path >> allow_text >> vars_text >> c.created_at >> c.destroyed_at >>
      sensitive_text >> policy_text >> c.restore_pending >> c.state_pending >> c.agent_pool >>
      labels_text >> c.opentofu_version >> c.source.connection_id >> c.spec_revision;
  c.agent_labels = agent_labels_from_text(labels_text);
  auto allow = parse_object(allow_text, 1 << 20);
  auto vars = parse_object(vars_text, 1 << 20);
  auto policy = parse_object(policy_text, 1 << 20);
  auto sensitive = names_from_text(sensitive_text);
  if (!allow || !vars || !policy || !sensitive)
    return fail(errc::kInternal, "capsule " + c.id + ": stored JSON is corrupt");
  c.sensitive_variable_names = std::move(*sensitive);
  auto allowlist = allowlist_from_json(*allow);
  auto variables = protocol::variables_from_json(*vars);
  auto run_policy = protocol::run_policy_from_json(*policy);
  if (!allowlist) return std::unexpected(allowlist.error().with_context("capsule " + c.id));
  if (!variables) return std::unexpected(variables.error().with_context("capsule " + c.id));
  if (!run_policy)
    return std::unexpected(run_policy.error().with_context("capsule " + c.id + ": policy"));
  c.output_allowlist = std::move(*allowlist);
  c.variables = std::move(*variables);
  c.policy = std::move(*run_policy);
  return c;
}

// A revision's spec as capsule_revisions keeps it: what Runs made from it run.
std::string revision_spec_text(const Capsule& c) {
  return takosumi::serialize(json::object{
      {"name", c.name},
      {"source", json::object{{"gitUrl", c.source.git_url},
                              {"ref", c.source.ref},
                              {"modulePath", c.source.module_path},
                              {"connection", c.source.connection_id ? json::value(*c.source.connection_id)
                                                                    : json::value(nullptr)}}},
      {"outputAllowlist", protocol::to_json(c.output_allowlist)},
      {"variables", protocol::to_json(c.variables)}});
}

Result<CapsuleRevision> revision_from_row(const Statement& s) {
  CapsuleRevision r;
  std::string spec_text;
  ColumnReader(s) >> r.capsule_id >> r.revision >> spec_text >> r.created_at;
  const std::string what = "capsule " + r.capsule_id + " revision " + std::to_string(r.revision);
  auto spec = parse_object(spec_text, 4 << 20);
  if (!spec) return fail(errc::kInternal, what + ": stored JSON is corrupt");
  const auto* source = spec->if_contains("source");
  const auto* name = spec->if_contains("name");
  if (!source || !source->is_object() || !name || !name->is_string())
    return fail(errc::kInternal, what + ": stored JSON is corrupt");
  r.name = std::string(name->get_string());
  const auto& src = source->get_object();
  for (auto [key, field] : {std::pair{"gitUrl", &r.source.git_url}, std::pair{"ref", &r.source.ref},
                            std::pair{"modulePath", &r.source.module_path}}) {
    const auto* v = src.if_contains(key);
    if (!v || !v->is_string()) return fail(errc::kInternal, what + ": stored JSON is corrupt");
    *field = std::string(v->get_string());
  }
  if (const auto* connection = src.if_contains("connection"); connection && connection->is_string())
    r.source.connection_id = std::string(connection->get_string());
  auto allow = get_optional_object(*spec, "outputAllowlist");
  auto vars = get_optional_object(*spec, "variables");
  if (!allow || !vars || !*allow || !*vars) return fail(errc::kInternal, what + ": stored JSON is corrupt");
  auto allowlist = allowlist_from_json(**allow);
  auto variables = protocol::variables_from_json(**vars);
  if (!allowlist) return std::unexpected(allowlist.error().with_context(what));
  if (!variables) return std::unexpected(variables.error().with_context(what));
  r.output_allowlist = std::move(*allowlist);
  r.variables = std::move(*variables);
  return r;
}

CapsuleRevision current_revision(const Capsule& c) {
  return CapsuleRevision{c.id, c.spec_revision, c.name, c.source, c.output_allowlist, c.variables,
                         c.created_at};
}

}  // namespace

Result<Workspace> CatalogStore::create_workspace(const std::string& name) {
  Workspace ws{crypto::new_id("ws"), name, clock_.now_unix()};
  auto st = db_.run("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)", ws.id, ws.name,
                    ws.created_at);
  if (!st && st.error().code == errc::kConflict)
    return fail(errc::kConflict, "workspace \"" + name + "\" already exists");
  if (!st) return std::unexpected(st.error());
  return ws;
}

Result<Workspace> CatalogStore::get_workspace(std::string_view id) {
  return one_row(db_.query("SELECT id, name, created_at FROM workspaces WHERE id = ?", id),
                 "workspace " + std::string(id), workspace_from_row);
}

Result<std::vector<Workspace>> CatalogStore::list_workspaces() {
  return collect(
      db_.query("SELECT id, name, created_at FROM workspaces ORDER BY created_at, rowid"),
      workspace_from_row);
}

Result<Capsule> CatalogStore::create_capsule(std::string_view workspace_id,
                                             const CapsuleRequest& req,
                                             const CapsuleSecretsRecord& secrets) {
  TAKOSUMI_TRY(get_workspace(workspace_id));
  Capsule c{crypto::new_id("cap"), std::string(workspace_id), req.name, req.source, req.output_allowlist,
            req.variables, clock_.now_unix()};
  c.connection_ids = secrets.connection_ids;
  c.sensitive_variable_names = secrets.sensitive_variable_names;
  c.policy = req.policy;
  c.agent_pool = req.agents.pool;
  c.agent_labels = req.agents.labels;
  c.opentofu_version = req.opentofu_version;
  return in_transaction(db_, [&]() -> Result<Capsule> {
    auto st = insert_capsule(c, secrets.sealed_sensitive_variables);
    if (!st && st.error().code == errc::kConflict)
      return fail(errc::kConflict, "capsule \"" + req.name + "\" already exists in this workspace");
    if (!st) return std::unexpected(st.error());
    TAKOSUMI_TRY(insert_connections(c.id, c.connection_ids));
    return c;
  });
}

Result<Workspace> CatalogStore::restore_workspace(const Workspace& ws) {
  auto st = db_.run("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)", ws.id, ws.name,
                    ws.created_at);
  if (!st && st.error().code == errc::kConflict)
    return fail(errc::kConflict, "a Workspace with the id " + ws.id + " or the name \"" + ws.name +
                                     "\" already exists here: a Workspace is restored once");
  if (!st) return std::unexpected(st.error());
  return ws;
}

Status CatalogStore::insert_capsule(const Capsule& c, const std::optional<std::string>& sealed) {
  TAKOSUMI_TRY(db_.run(
      "INSERT INTO capsules (id, workspace_id, name, git_url, ref, module_path, output_allowlist,"
      " variables, created_at, destroyed_at, sensitive_variable_names, sealed_sensitive_variables,"
      " policy, restore_pending, state_pending, agent_pool, agent_labels, opentofu_version,"
      " git_connection_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      c.id, c.workspace_id, c.name, c.source.git_url, c.source.ref, c.source.module_path,
      takosumi::serialize(protocol::to_json(c.output_allowlist)),
      takosumi::serialize(protocol::to_json(c.variables)), c.created_at, c.destroyed_at,
      names_to_text(c.sensitive_variable_names), sealed,
      takosumi::serialize(protocol::to_json(c.policy)), c.restore_pending, c.state_pending,
      c.agent_pool, agent_labels_text(c.agent_labels), c.opentofu_version, c.source.connection_id));
  TAKOSUMI_TRY(record_revision(c));  // revision 1: a new Capsule, or one a backup restores
  return write_agent_labels(c.id, c.agent_labels);
}

Status CatalogStore::record_revision(const Capsule& c) {
  // Revision 1 is as old as the Capsule, even when recorded at its first change (schema 17).
  const std::int64_t made = c.spec_revision == 1 ? c.created_at : clock_.now_unix();
  return db_.run(
      "INSERT INTO capsule_revisions (capsule_id, revision, spec, created_at) VALUES (?, ?, ?, ?)"
      " ON CONFLICT (capsule_id, revision) DO NOTHING",
      c.id, c.spec_revision, revision_spec_text(c), made);
}

Capsule capsule_as_of(const Capsule& current, const CapsuleRevision& revision) {
  Capsule as_of = current;
  as_of.name = revision.name;
  as_of.source = revision.source;
  // The credential goes with the repository: the Capsule's current Connection while the
  // revision's repository is the Capsule's (a token rotated with PUT …/source-connection reaches
  // queued Runs), the revision's own when the Capsule moved to another one since.
  if (revision.source.git_url == current.source.git_url)
    as_of.source.connection_id = current.source.connection_id;
  as_of.output_allowlist = revision.output_allowlist;
  as_of.variables = revision.variables;
  as_of.spec_revision = revision.revision;
  return as_of;
}

Result<Capsule> CatalogStore::change_capsule(const Capsule& current, const CapsuleChange& change) {
  return in_transaction(db_, [&]() -> Result<Capsule> {
    // From the Capsule as it is now, inside the transaction: what changed without a new revision
    // since `current` was read (its source Connection, its policy) is kept, not written back.
    auto stored = get_capsule(current.id);
    if (!stored) return std::unexpected(stored.error());
    if (stored->spec_revision != current.spec_revision)
      return fail(errc::kConflict, "capsule " + current.id + " changed while this change was checked "
                                   "(now at revision " + std::to_string(stored->spec_revision) +
                                   "); read it again and repeat the change");
    Capsule next = with_change(*stored, change);
    next.spec_revision = stored->spec_revision + 1;
    // A Capsule from before revisions were kept records the revision its Runs so far ran.
    TAKOSUMI_TRY(record_revision(*stored));
    auto st = db_.run(
        "UPDATE capsules SET name = ?, git_url = ?, ref = ?, module_path = ?, git_connection_id = ?,"
        " output_allowlist = ?, variables = ?, spec_revision = ? WHERE id = ?",
        next.name, next.source.git_url, next.source.ref, next.source.module_path,
        next.source.connection_id, takosumi::serialize(protocol::to_json(next.output_allowlist)),
        takosumi::serialize(protocol::to_json(next.variables)), next.spec_revision, next.id);
    if (!st && st.error().code == errc::kConflict)
      return fail(errc::kConflict, "capsule \"" + next.name + "\" already exists in this workspace");
    if (!st) return std::unexpected(st.error());
    TAKOSUMI_TRY(record_revision(next));
    // A restored Capsule's source Connection given here ends its wait for it too.
    if (next.source.connection_id && next.source.connection_id != stored->source.connection_id)
      TAKOSUMI_TRY(settle_restore_pending(next.id, {"sourceConnection"}));
    return get_capsule(next.id);
  });
}

Result<CapsuleRevision> CatalogStore::get_revision(std::string_view capsule_id, std::int64_t revision) {
  auto capsule = get_capsule(capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  auto found = collect(db_.query("SELECT capsule_id, revision, spec, created_at FROM capsule_revisions"
                                 " WHERE capsule_id = ? AND revision = ?",
                                 capsule_id, revision),
                       revision_from_row);
  if (!found) return std::unexpected(found.error());
  if (!found->empty()) return std::move(found->front());
  if (revision == capsule->spec_revision) return current_revision(*capsule);
  return fail(errc::kNotFound, "capsule " + std::string(capsule_id) + " has no revision " +
                                   std::to_string(revision));
}

Result<std::vector<CapsuleRevision>> CatalogStore::list_revisions(std::string_view capsule_id, int limit,
                                                                  std::int64_t after) {
  auto capsule = get_capsule(capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  auto found = collect(db_.query("SELECT capsule_id, revision, spec, created_at FROM capsule_revisions"
                                 " WHERE capsule_id = ? AND revision > ? ORDER BY revision LIMIT ?",
                                 capsule_id, after, std::int64_t{limit}),
                       revision_from_row);
  if (!found) return std::unexpected(found.error());
  // The current revision of a Capsule from before revisions were kept has no row yet: it ends the
  // last page.
  const bool last_page = static_cast<int>(found->size()) < limit;
  if (last_page && capsule->spec_revision > after &&
      (found->empty() || found->back().revision != capsule->spec_revision))
    found->push_back(current_revision(*capsule));
  return found;
}

// The labels as claims match them (run_claims.cpp), beside the JSON the Capsule is shown with.
Status CatalogStore::write_agent_labels(std::string_view capsule_id,
                                        const std::vector<std::string>& labels) {
  TAKOSUMI_TRY(db_.run("DELETE FROM capsule_agent_labels WHERE capsule_id = ?", capsule_id));
  for (const auto& label : labels)
    TAKOSUMI_TRY(db_.run("INSERT INTO capsule_agent_labels (capsule_id, label) VALUES (?, ?)",
                         capsule_id, label));
  return {};
}

Status CatalogStore::set_state_pending(std::string_view capsule_id, bool pending) {
  return db_.run("UPDATE capsules SET state_pending = ? WHERE id = ?", pending, capsule_id);
}

Status CatalogStore::restore_capsule(const Capsule& c) {
  auto st = insert_capsule(c, std::nullopt);
  if (!st && st.error().code == errc::kConflict)
    return fail(errc::kConflict, "capsule " + c.id + " already exists here");
  return st;
}

Status CatalogStore::insert_connections(std::string_view capsule_id,
                                        const std::vector<std::string>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    TAKOSUMI_TRY(db_.run(
        "INSERT INTO capsule_connections (capsule_id, connection_id, position) VALUES (?, ?, ?)",
        capsule_id, ids[i], static_cast<std::int64_t>(i)));
  return {};
}

Status CatalogStore::set_connections(std::string_view capsule_id,
                                     const std::vector<std::string>& ids) {
  TAKOSUMI_TRY(get_capsule(capsule_id));
  return in_transaction(db_, [&]() -> Status {
    TAKOSUMI_TRY(db_.run("DELETE FROM capsule_connections WHERE capsule_id = ?", capsule_id));
    // A restored Capsule's Connections are recreated: what the restore asked for is done.
    TAKOSUMI_TRY(settle_restore_pending(capsule_id, {"connections", "sensitiveVariableNames"}));
    return insert_connections(capsule_id, ids);
  });
}

Status CatalogStore::set_source_connection(std::string_view capsule_id,
                                           const std::optional<std::string>& connection_id) {
  TAKOSUMI_TRY(get_capsule(capsule_id));
  return in_transaction(db_, [&]() -> Status {
    TAKOSUMI_TRY(db_.run("UPDATE capsules SET git_connection_id = ? WHERE id = ?", connection_id, capsule_id));
    return settle_restore_pending(capsule_id, {"sourceConnection"});
  });
}

Status CatalogStore::settle_restore_pending(std::string_view capsule_id,
                                            std::initializer_list<std::string_view> done) {
  auto capsule = get_capsule(capsule_id);
  if (!capsule) return std::unexpected(capsule.error());
  if (!capsule->restore_pending) return {};
  auto pending = parse_object(*capsule->restore_pending, 1 << 20);
  // A record this program cannot read names nothing it could still wait for.
  if (pending)
    for (const auto key : done) pending->erase(key);
  const std::optional<std::string> left =
      pending && !pending->empty() ? std::optional(takosumi::serialize(*pending)) : std::nullopt;
  return db_.run("UPDATE capsules SET restore_pending = ? WHERE id = ?", left, capsule_id);
}

Status CatalogStore::set_sensitive_variables(std::string_view capsule_id,
                                             const std::vector<std::string>& names,
                                             const std::optional<std::string>& sealed) {
  TAKOSUMI_TRY(get_capsule(capsule_id));
  return db_.run(
      "UPDATE capsules SET sensitive_variable_names = ?, sealed_sensitive_variables = ?"
      " WHERE id = ?",
      names_to_text(names), sealed, capsule_id);
}

Status CatalogStore::set_policy(std::string_view capsule_id, const protocol::RunPolicy& policy) {
  TAKOSUMI_TRY(get_capsule(capsule_id));
  return db_.run("UPDATE capsules SET policy = ? WHERE id = ?",
                 takosumi::serialize(protocol::to_json(policy)), capsule_id);
}

Status CatalogStore::set_opentofu_version(std::string_view capsule_id,
                                          const std::optional<std::string>& constraint) {
  TAKOSUMI_TRY(get_capsule(capsule_id));
  return db_.run("UPDATE capsules SET opentofu_version = ? WHERE id = ?", constraint, capsule_id);
}

Status CatalogStore::set_agent_requirements(std::string_view capsule_id,
                                            const AgentRequirements& requirements) {
  TAKOSUMI_TRY(get_capsule(capsule_id));
  return in_transaction(db_, [&]() -> Status {
    TAKOSUMI_TRY(db_.run("UPDATE capsules SET agent_pool = ?, agent_labels = ? WHERE id = ?",
                         requirements.pool, agent_labels_text(requirements.labels), capsule_id));
    return write_agent_labels(capsule_id, requirements.labels);
  });
}

Result<std::optional<std::string>> CatalogStore::sealed_sensitive_variables(
    std::string_view capsule_id) {
  return one_row(
      db_.query("SELECT sealed_sensitive_variables FROM capsules WHERE id = ?", capsule_id),
      "capsule " + std::string(capsule_id), [](const Statement& s) { return s.optional_text(0); });
}

Result<Capsule> CatalogStore::with_connections(Result<Capsule> capsule) {
  if (!capsule) return capsule;
  auto s = db_.query(
      "SELECT connection_id FROM capsule_connections WHERE capsule_id = ? ORDER BY position",
      capsule->id);
  auto ids = collect(std::move(s), [](const Statement& row) { return row.text(0); });
  if (!ids) return std::unexpected(ids.error());
  capsule->connection_ids = std::move(*ids);
  return capsule;
}

Result<Capsule> CatalogStore::get_capsule(std::string_view id) {
  return one_row(
      db_.query("SELECT " + std::string(kCapsuleColumns) + " FROM capsules WHERE id = ?", id),
      "capsule " + std::string(id),
      [this](const Statement& s) { return with_connections(capsule_from_row(s)); });
}

Status CatalogStore::set_destroyed(std::string_view capsule_id, std::optional<std::int64_t> at) {
  return db_.run("UPDATE capsules SET destroyed_at = ? WHERE id = ?", at, capsule_id);
}

Result<std::vector<Capsule>> CatalogStore::list_capsules(std::string_view workspace_id) {
  TAKOSUMI_TRY(get_workspace(workspace_id));
  auto s = db_.query("SELECT " + std::string(kCapsuleColumns) +
                         " FROM capsules WHERE workspace_id = ? ORDER BY created_at, rowid",
                     workspace_id);
  auto all = collect(std::move(s), capsule_from_row);
  if (!all) return std::unexpected(all.error());
  std::vector<Capsule> out = std::move(*all);
  for (auto& c : out) {
    auto loaded = with_connections(std::move(c));
    if (!loaded) return std::unexpected(loaded.error());
    c = std::move(*loaded);
  }
  return out;
}

}  // namespace takosumi::controlplane
