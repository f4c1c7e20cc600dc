#include "controlplane/store/db/schema.hpp"

#include <cstdint>
#include <iterator>
#include <string>

#include "common/error_codes.hpp"
#include "protocol/source_url.hpp"

namespace takosumi::controlplane {
namespace {

// PRAGMA user_version of the schema this file creates. Version 0 with tables present is the first
// release (version 1), which had no user_version; create_schema migrates it.
constexpr std::int64_t kSchemaVersion = 18;

// The columns of `runs`. New columns go at the end: the v1 → v2 copy relies on v1's columns being
// a prefix.
constexpr std::string_view kRunsColumns = R"sql(
  id TEXT PRIMARY KEY,
  capsule_id TEXT NOT NULL REFERENCES capsules(id),
  type TEXT NOT NULL CHECK (type IN ('plan', 'apply', 'destroy_plan', 'drift_check')),
  status TEXT NOT NULL
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  attempt INTEGER NOT NULL DEFAULT 0,
  source_commit TEXT NOT NULL,
  planned_by TEXT REFERENCES runs(id),
  plan_digest TEXT,
  plan_artifact_sha256 TEXT,
  has_changes INTEGER NOT NULL DEFAULT 0,
  change_summary TEXT,
  resource_changes TEXT,
  failure_code TEXT,
  failure_message TEXT,
  state_version_id TEXT,
  tofu_version TEXT,
  provider_lock_sha256 TEXT,
  env_names TEXT,
  phase_millis TEXT,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  agent_id TEXT REFERENCES agents(id),
  lease_token_sha256 TEXT,
  lease_expires_at INTEGER,
  prior_state_version_id TEXT,
  prior_generation INTEGER,
  completed_attempt INTEGER NOT NULL DEFAULT 0,
  log_bytes INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  restores_state_version_id TEXT REFERENCES state_versions(id),
  data_loss TEXT,
  data_loss_accepted INTEGER NOT NULL DEFAULT 0,
  drift TEXT,
  refused_outputs TEXT,
  apply_started_attempt INTEGER,
  dependency_inputs TEXT
)sql";

constexpr std::string_view kRunsColumnsV1 =
    "id, capsule_id, type, status, attempt, source_commit, planned_by, plan_digest,"
    " plan_artifact_sha256, has_changes, change_summary, resource_changes, failure_code,"
    " failure_message, state_version_id, tofu_version, provider_lock_sha256, env_names,"
    " phase_millis, cancel_requested, agent_id, lease_token_sha256, lease_expires_at,"
    " prior_state_version_id, prior_generation, completed_attempt, log_bytes, created_at,"
    " started_at, finished_at";

constexpr std::string_view kTablesBeforeRuns = R"sql(
CREATE TABLE IF NOT EXISTS workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL);

CREATE TABLE IF NOT EXISTS capsules (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  git_url TEXT NOT NULL,
  ref TEXT NOT NULL,
  module_path TEXT NOT NULL,
  output_allowlist TEXT NOT NULL,
  variables TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  destroyed_at INTEGER,
  sensitive_variable_names TEXT NOT NULL DEFAULT '[]',
  sealed_sensitive_variables TEXT,
  policy TEXT NOT NULL DEFAULT '{}',
  UNIQUE (workspace_id, name));

CREATE TABLE IF NOT EXISTS agents (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  sign_public_key TEXT NOT NULL,
  box_public_key TEXT NOT NULL,
  token_sha256 TEXT NOT NULL,
  version TEXT NOT NULL,
  labels TEXT NOT NULL,
  capacity INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  key_reset_at INTEGER,
  reset_sign_public_key TEXT,
  UNIQUE (name, sign_public_key));
CREATE INDEX IF NOT EXISTS agents_by_token ON agents(token_sha256);
)sql";

constexpr std::string_view kTablesAfterRuns = R"sql(
CREATE UNIQUE INDEX IF NOT EXISTS runs_one_apply_per_plan ON runs(planned_by)
  WHERE planned_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_by_status ON runs(status);
CREATE INDEX IF NOT EXISTS runs_by_capsule ON runs(capsule_id);

CREATE TABLE IF NOT EXISTS state_versions (
  id TEXT PRIMARY KEY,
  capsule_id TEXT NOT NULL REFERENCES capsules(id),
  generation INTEGER NOT NULL CHECK (generation >= 1),
  created_by_run_id TEXT NOT NULL REFERENCES runs(id),
  source_commit TEXT NOT NULL,
  serial INTEGER NOT NULL,
  lineage TEXT NOT NULL,
  plaintext_sha256 TEXT NOT NULL,
  ciphertext_sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  restored_from TEXT REFERENCES state_versions(id),
  partial INTEGER NOT NULL DEFAULT 0,
  UNIQUE (capsule_id, generation));

CREATE TABLE IF NOT EXISTS capsule_outputs (
  capsule_id TEXT PRIMARY KEY REFERENCES capsules(id),
  state_version_id TEXT REFERENCES state_versions(id),
  generation INTEGER NOT NULL,
  run_id TEXT NOT NULL REFERENCES runs(id),
  outputs TEXT NOT NULL,
  updated_at INTEGER NOT NULL);

CREATE TABLE IF NOT EXISTS artifacts (
  run_id TEXT NOT NULL REFERENCES runs(id),
  kind TEXT NOT NULL CHECK (kind IN ('state', 'plan')),
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, kind, sha256));

CREATE TABLE IF NOT EXISTS run_logs (
  run_id TEXT NOT NULL REFERENCES runs(id),
  attempt INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (run_id, attempt, seq));
)sql";

// Tables new in version 3: Connections (values only sealed to the storage key), their assignment
// to Capsules, and the append-only audit trail.
constexpr std::string_view kTablesV3 = R"sql(
CREATE TABLE IF NOT EXISTS connections (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  provider TEXT NOT NULL,
  auth_mode TEXT NOT NULL CHECK (auth_mode IN ('env', 'files')),
  credential_names TEXT NOT NULL,
  sealed_values TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER,
  UNIQUE (workspace_id, name));

CREATE TABLE IF NOT EXISTS capsule_connections (
  capsule_id TEXT NOT NULL REFERENCES capsules(id),
  connection_id TEXT NOT NULL REFERENCES connections(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (capsule_id, connection_id));
CREATE INDEX IF NOT EXISTS capsule_connections_by_connection ON capsule_connections(connection_id);

CREATE TABLE IF NOT EXISTS audit_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  workspace_id TEXT,
  capsule_id TEXT,
  run_id TEXT,
  connection_id TEXT,
  detail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_events_by_workspace ON audit_events(workspace_id, id);
)sql";

// v8: a Capsule's Dependencies on public Outputs of other Capsules of its Workspace
// (docs/passing-values.md).
constexpr std::string_view kTablesV8 = R"sql(
CREATE TABLE IF NOT EXISTS dependencies (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  consumer_capsule_id TEXT NOT NULL REFERENCES capsules(id),
  producer_capsule_id TEXT NOT NULL REFERENCES capsules(id),
  outputs TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (consumer_capsule_id, producer_capsule_id));
CREATE INDEX IF NOT EXISTS dependencies_by_producer ON dependencies(producer_capsule_id);
)sql";

// v9: scoped API tokens (only the SHA-256 of each secret) with their Workspace roles,
// OutputShares between Workspaces (a Dependency through a share names it: output_share_id), and
// workspace plans: each step a Capsule with the commit its ref named when the plan was asked
// for, the producers it waits for, and its plan Run once created; backups (the signed document
// is a blob), and on a restored Capsule what must be set again (restore_pending).
constexpr std::string_view kTablesV9 = R"sql(
CREATE TABLE IF NOT EXISTS api_tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL UNIQUE,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER,
  last_used_at INTEGER);
CREATE TABLE IF NOT EXISTS api_token_roles (
  token_id TEXT NOT NULL REFERENCES api_tokens(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'owner')),
  PRIMARY KEY (token_id, workspace_id));
CREATE INDEX IF NOT EXISTS api_token_roles_by_workspace ON api_token_roles(workspace_id);
CREATE TABLE IF NOT EXISTS output_shares (
  id TEXT PRIMARY KEY,
  producer_capsule_id TEXT NOT NULL REFERENCES capsules(id),
  from_workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  to_workspace_id TEXT NOT NULL,
  outputs TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'revoked')),
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  approved_by TEXT,
  approved_at INTEGER,
  revoked_by TEXT,
  revoked_at INTEGER);
CREATE INDEX IF NOT EXISTS output_shares_from ON output_shares(from_workspace_id);
CREATE INDEX IF NOT EXISTS output_shares_to ON output_shares(to_workspace_id);
CREATE TABLE IF NOT EXISTS workspace_plans (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  finished_at INTEGER);
CREATE INDEX IF NOT EXISTS workspace_plans_by_workspace ON workspace_plans(workspace_id);
CREATE TABLE IF NOT EXISTS workspace_plan_steps (
  workspace_plan_id TEXT NOT NULL REFERENCES workspace_plans(id),
  capsule_id TEXT NOT NULL REFERENCES capsules(id),
  position INTEGER NOT NULL,
  source_commit TEXT NOT NULL,
  producers TEXT NOT NULL,
  plan_run_id TEXT REFERENCES runs(id),
  PRIMARY KEY (workspace_plan_id, capsule_id));
CREATE TABLE IF NOT EXISTS backups (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  origin TEXT NOT NULL CHECK (origin IN ('created', 'restored')),
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS backups_by_workspace ON backups(workspace_id);
)sql";

constexpr std::string_view kTablesV10 = R"sql(
CREATE TABLE IF NOT EXISTS pool_tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL UNIQUE,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER);
)sql";

// StateVersions and audit events are append-only, whatever writes to the database.
constexpr std::string_view kAppendOnlySqlite = R"sql(
CREATE TRIGGER IF NOT EXISTS state_versions_no_update BEFORE UPDATE ON state_versions
  BEGIN SELECT RAISE(ABORT, 'state versions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS state_versions_no_delete BEFORE DELETE ON state_versions
  BEGIN SELECT RAISE(ABORT, 'state versions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_events_no_update BEFORE UPDATE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_events_no_delete BEFORE DELETE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
)sql";

// The same in PostgreSQL: one trigger function, its message naming the table. Its error is an
// integrity violation (class 23), a `conflict` as SQLite's RAISE(ABORT) is.
constexpr std::string_view kAppendOnlyPostgres = R"sql(
CREATE OR REPLACE FUNCTION takosumi_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% are append-only', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation';
END $$;
CREATE OR REPLACE TRIGGER state_versions_append_only BEFORE UPDATE OR DELETE ON state_versions
  FOR EACH ROW EXECUTE FUNCTION takosumi_append_only('state versions');
CREATE OR REPLACE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION takosumi_append_only('audit events');
)sql";

// The tables' DDL is written once, in SQLite's words; PostgreSQL reads it with 64-bit integers
// (SQLite's INTEGER is 64-bit, PostgreSQL's 32), an identity column for the audit id, and a
// `rowid` on every table, the insertion order SQLite keeps implicitly and the stores sort by.
std::string postgres_ddl(std::string_view sqlite_ddl) {
  std::string out;
  std::string_view rest = sqlite_ddl;
  constexpr std::string_view kCreate = "CREATE TABLE IF NOT EXISTS ";
  constexpr std::string_view kAutoId = " INTEGER PRIMARY KEY AUTOINCREMENT";
  while (!rest.empty()) {
    if (rest.starts_with(kAutoId)) {
      out += " BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY";
      rest.remove_prefix(kAutoId.size());
    } else if (rest.starts_with(" INTEGER")) {
      out += " BIGINT";
      rest.remove_prefix(8);
    } else if (rest.starts_with(kCreate)) {
      const auto open = rest.find('(');
      out += rest.substr(0, open + 1);
      out += "\n  rowid BIGINT GENERATED ALWAYS AS IDENTITY,";
      rest.remove_prefix(open + 1);
    } else {
      out += rest.front();
      rest.remove_prefix(1);
    }
  }
  return out;
}

// Runs DDL written in SQLite's words on either database.
Status ddl(Database& db, std::string_view sql) {
  if (db.driver() == StoreDriver::sqlite) return db.exec(sql);
  return db.exec(postgres_ddl(sql));
}

std::string create_runs_sql(std::string_view prefix) {
  return std::string(prefix) + " (" + std::string(kRunsColumns) + ");";
}

Result<bool> has_column(Database& db, std::string_view table, std::string_view column) {
  auto s = db.driver() == StoreDriver::sqlite
               ? db.query("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", table, column)
               : db.query("SELECT 1 FROM information_schema.columns WHERE table_schema ="
                          " current_schema() AND table_name = ? AND column_name = ?",
                          table, column);
  if (!s) return std::unexpected(s.error());
  return s->step();
}

Status add_column_if_missing(Database& db, std::string_view table, std::string_view column,
                             std::string_view definition) {
  auto present = has_column(db, table, column);
  if (!present) return std::unexpected(present.error());
  if (*present) return {};
  return ddl(db, "ALTER TABLE " + std::string(table) + " ADD COLUMN " + std::string(column) + " " +
                     std::string(definition));
}

// v1 → v2: new nullable columns on capsules and state_versions (ALTER TABLE ADD COLUMN), and
// `runs` rebuilt because its CHECK on `type` must admit the new Run types (SQLite cannot alter a
// CHECK): a migration that rebuilds tables.
Status to_v2(Database& db) {
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "destroyed_at", "INTEGER"));
  TAKOSUMI_TRY(add_column_if_missing(db, "state_versions", "restored_from",
                                     "TEXT REFERENCES state_versions(id)"));
  TAKOSUMI_TRY(db.exec("DROP TABLE IF EXISTS runs_v2;" + create_runs_sql("CREATE TABLE runs_v2")));
  TAKOSUMI_TRY(db.exec("INSERT INTO runs_v2 (" + std::string(kRunsColumnsV1) + ") SELECT " +
                       std::string(kRunsColumnsV1) + " FROM runs"));
  return db.exec("DROP TABLE runs; ALTER TABLE runs_v2 RENAME TO runs;");
}

// v2 → v3: only additions (nullable or defaulted columns, new tables), so no table needs
// rebuilding and every existing row keeps its meaning.
Status to_v3(Database& db) {
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "sensitive_variable_names",
                                     "TEXT NOT NULL DEFAULT '[]'"));
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "sealed_sensitive_variables", "TEXT"));
  TAKOSUMI_TRY(add_column_if_missing(db, "runs", "refused_outputs", "TEXT"));
  TAKOSUMI_TRY(db.exec(kTablesV3));
  return db.exec(kAppendOnlySqlite);
}

// v3 → v4: the Capsule's Run policy. Existing Capsules read '{}', the default policy (no provider
// lists; provisioners and external data not allowed), as a Capsule created without one does.
Status to_v4(Database& db) {
  return add_column_if_missing(db, "capsules", "policy", "TEXT NOT NULL DEFAULT '{}'");
}

// v4 → v5: crash safety. Existing StateVersions all came from succeeded applies (a failed apply
// stored none before v5), so partial defaults to 0; no Run has announced its apply phase yet.
Status to_v5(Database& db) {
  TAKOSUMI_TRY(
      add_column_if_missing(db, "state_versions", "partial", "INTEGER NOT NULL DEFAULT 0"));
  return add_column_if_missing(db, "runs", "apply_started_attempt", "INTEGER");
}

// v5 → v6: agent identity. key_reset_at marks an operator's reset of an agent's keys; no agent
// has one yet. Agents that share a name (a new key used to make a new agent) are kept as they are.
Status to_v6(Database& db) {
  return add_column_if_missing(db, "agents", "key_reset_at", "INTEGER");
}

// v6 → v7: an operator's reset names the signing key the agent may come back with. A reset that
// is pending from v6 named none, so it admits no key until the operator resets again with one.
Status to_v7(Database& db) {
  return add_column_if_missing(db, "agents", "reset_sign_public_key", "TEXT");
}

// v7 → v8: Dependencies, and what each Run took from them (dependency_inputs, NULL for every
// Run before: none had any).
Status to_v8(Database& db) {
  TAKOSUMI_TRY(add_column_if_missing(db, "runs", "dependency_inputs", "TEXT"));
  return ddl(db, kTablesV8);
}

// v8 → v9: new tables only; no Dependency went through a share before.
Status to_v9(Database& db) {
  TAKOSUMI_TRY(ddl(db, kTablesV9));
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "restore_pending", "TEXT"));
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "state_pending", "INTEGER"));
  TAKOSUMI_TRY(add_column_if_missing(db, "workspace_plans", "finished_at", "INTEGER"));
  return add_column_if_missing(db, "dependencies", "output_share_id",
                               "TEXT REFERENCES output_shares(id)");
}

// v9 → v10: agent credentials with a lifecycle (pool tokens made through the API; an agent's
// certificate identity, revocation, token age for rotation, the token it replaced and until when
// that one still counts, the pool token it registered with, its busy slots).
Status to_v10(Database& db) {
  TAKOSUMI_TRY(ddl(db, kTablesV10));
  for (const auto& [column, type] :
       {std::pair{"certificate_identity", "TEXT"}, {"revoked_at", "INTEGER"},
        {"token_issued_at", "INTEGER"}, {"previous_token_sha256", "TEXT"},
        {"previous_token_expires_at", "INTEGER"}, {"pool_token_id", "TEXT"},
        {"busy_slots", "INTEGER"}})
    TAKOSUMI_TRY(add_column_if_missing(db, "agents", column, type));
  // Tokens issued before v10 start their lifetime at the upgrade, not at their agent's creation:
  // an upgrade must not sign out every agent older than agentCredentialTtlSeconds mid-Run.
  TAKOSUMI_TRY(db.exec(db.driver() == StoreDriver::sqlite
                           ? "UPDATE agents SET token_issued_at = CAST(strftime('%s', 'now') AS"
                             " INTEGER) WHERE token_issued_at IS NULL"
                           : "UPDATE agents SET token_issued_at = extract(epoch FROM now())::bigint"
                             " WHERE token_issued_at IS NULL"));
  return db.exec(
      "CREATE INDEX IF NOT EXISTS agents_by_previous_token ON agents(previous_token_sha256)");
}

// v10 → v11: an ephemeral agent's deregistration (its credential ended by itself, not revoked).
Status to_v11(Database& db) {
  return add_column_if_missing(db, "agents", "deregistered_at", "INTEGER");
}

// v11 → v12: the keys the store was first served with (key_binding.hpp: a control plane with
// other keys is refused), registration challenges (kept in memory before: now any replica
// redeems what another issued, once); on PostgreSQL also the blobs themselves (blob_store.hpp: every replica
// has every blob, in chunks), and a Capsule's Runs in insertion order without a sort (SQLite's
// indexes end in the rowid already; its blobs are the files in dataDir).
Status to_v12(Database& db) {
  TAKOSUMI_TRY(db.exec("CREATE TABLE IF NOT EXISTS control_plane_keys ("
                       "storage_public_key TEXT NOT NULL, signing_public_key TEXT NOT NULL)"));
  TAKOSUMI_TRY(ddl(db, "CREATE TABLE IF NOT EXISTS registration_challenges ("
                       "challenge_sha256 TEXT PRIMARY KEY, pool_token_sha256 TEXT NOT NULL,"
                       " expires_at INTEGER NOT NULL);"));
  if (db.driver() == StoreDriver::sqlite) return {};
  return db.exec(
      "CREATE TABLE IF NOT EXISTS blobs (sha256 TEXT PRIMARY KEY, size BIGINT NOT NULL,"
      " chunks BIGINT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS blob_chunks (sha256 TEXT NOT NULL, seq BIGINT NOT NULL,"
      " data BYTEA NOT NULL, PRIMARY KEY (sha256, seq));"
      "CREATE INDEX IF NOT EXISTS runs_by_capsule_in_order ON runs(capsule_id, rowid)");
}

// v12 → v13: agent pools (docs/operations.md "Agent pools"). A pool has a name, labels every
// agent of it has, and the Workspaces whose Capsules may use it ('*': all); a pool token admits
// agents to its pool; a Capsule names the pool and the labels its Runs need (capsules.agent_labels
// as shown, capsule_agent_labels as claims match them). Everything before belongs to the pool
// "default", which always exists and is open to every Workspace. PostgreSQL gets SQLite's instr()
// under a name of ours (takosumi_instr: another extension's instr() is left alone) for the claim's
// label match.
Status to_v13(Database& db) {
  TAKOSUMI_TRY(ddl(db, "CREATE TABLE IF NOT EXISTS agent_pools (name TEXT PRIMARY KEY,"
                       " labels TEXT NOT NULL, created_by TEXT NOT NULL,"
                       " created_at INTEGER NOT NULL);"
                       "CREATE TABLE IF NOT EXISTS agent_pool_workspaces ("
                       " pool TEXT NOT NULL REFERENCES agent_pools(name),"
                       " workspace_id TEXT NOT NULL, PRIMARY KEY (pool, workspace_id));"
                       "CREATE TABLE IF NOT EXISTS capsule_agent_labels ("
                       " capsule_id TEXT NOT NULL REFERENCES capsules(id),"
                       " label TEXT NOT NULL, PRIMARY KEY (capsule_id, label));"));
  TAKOSUMI_TRY(db.exec("INSERT INTO agent_pools (name, labels, created_by, created_at)"
                       " VALUES ('default', '[]', 'control-plane', 0) ON CONFLICT DO NOTHING;"
                       "INSERT INTO agent_pool_workspaces (pool, workspace_id)"
                       " VALUES ('default', '*') ON CONFLICT DO NOTHING"));
  if (db.driver() == StoreDriver::postgres)
    TAKOSUMI_TRY(db.exec("CREATE OR REPLACE FUNCTION takosumi_instr(haystack text, needle text)"
                         " RETURNS integer LANGUAGE sql IMMUTABLE AS"
                         " 'SELECT strpos(haystack, needle)'"));
  TAKOSUMI_TRY(add_column_if_missing(db, "pool_tokens", "pool", "TEXT NOT NULL DEFAULT 'default'"));
  TAKOSUMI_TRY(add_column_if_missing(db, "agents", "pool", "TEXT NOT NULL DEFAULT 'default'"));
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "agent_pool", "TEXT NOT NULL DEFAULT 'default'"));
  return add_column_if_missing(db, "capsules", "agent_labels", "TEXT NOT NULL DEFAULT '[]'");
}

// v13 → v14: offline agent pools (docs/air-gapped.md): their agents are registered from their
// public keys alone and take Runs only as offline Run bundles, never by claiming.
// Results of offline Runs the fencing refused (a stale generation, a lease another attempt holds):
// kept as blobs, and shown as the Capsule's attention until a later StateVersion. The Run bundle
// each export made, so a repeat export answers the same bundle.
Status to_v14(Database& db) {
  TAKOSUMI_TRY(ddl(db, "CREATE TABLE IF NOT EXISTS kept_results ("
                       " run_id TEXT NOT NULL REFERENCES runs(id), sha256 TEXT NOT NULL,"
                       " capsule_id TEXT NOT NULL, agent_id TEXT NOT NULL, code TEXT NOT NULL,"
                       " created_at INTEGER NOT NULL, PRIMARY KEY (run_id, sha256));"
                       "CREATE TABLE IF NOT EXISTS run_bundles ("
                       " run_id TEXT NOT NULL REFERENCES runs(id), attempt INTEGER NOT NULL,"
                       " agent_id TEXT NOT NULL, sha256 TEXT NOT NULL, created_at INTEGER NOT NULL,"
                       " PRIMARY KEY (run_id, attempt));"));
  return add_column_if_missing(db, "agent_pools", "offline", "INTEGER NOT NULL DEFAULT 0");
}

// v14 → v15: the OpenTofu versions a Capsule's Runs may use (a constraint; NULL: any, as every
// Capsule before), and which of its agent's OpenTofu builds a Run used (NULL: not reported).
Status to_v15(Database& db) {
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "opentofu_version", "TEXT"));
  return add_column_if_missing(db, "runs", "tofu_build", "TEXT");
}

// v15 → v16: sources per Workspace by construction (protocol/source_url.hpp). A Connection has a
// kind ('provider' as every one before, or 'git': what a Capsule's source is fetched with), a
// Capsule names the Connection of kind git its source uses, and no stored gitUrl keeps credentials
// of its own: a password or token before "@" is removed (shown, backed up and sent without it; a
// private repository then needs a Connection of kind git).
// An OutputShare's receiving Workspace needs not exist either: an offer is recorded alike for an
// unknown Workspace and for one the giving side cannot read (it is simply never approved), so
// an offer tells nobody which Workspace ids exist.
Status drop_share_target_reference(Database& db) {
  if (db.driver() == StoreDriver::postgres)
    return db.exec("ALTER TABLE output_shares DROP CONSTRAINT IF EXISTS output_shares_to_workspace_id_fkey");
  auto referenced = db.single_integer(
      "SELECT count(*) FROM sqlite_master WHERE name = 'output_shares' AND sql LIKE "
      "'%to_workspace_id TEXT NOT NULL REFERENCES%'");
  if (!referenced) return std::unexpected(referenced.error());
  if (*referenced == 0) return {};
  const std::string table(kTablesV9.substr(kTablesV9.find("CREATE TABLE IF NOT EXISTS output_shares")));
  std::string create = table.substr(0, table.find(");") + 2);
  create.replace(create.find("IF NOT EXISTS output_shares"), 27, "output_shares_v16");
  TAKOSUMI_TRY(db.exec("DROP TABLE IF EXISTS output_shares_v16;" + create));
  TAKOSUMI_TRY(db.exec("INSERT INTO output_shares_v16 SELECT * FROM output_shares;"
                       "DROP TABLE output_shares;"
                       "ALTER TABLE output_shares_v16 RENAME TO output_shares;"
                       "CREATE INDEX IF NOT EXISTS output_shares_from ON output_shares(from_workspace_id);"
                       "CREATE INDEX IF NOT EXISTS output_shares_to ON output_shares(to_workspace_id);"));
  return {};
}

Status to_v16(Database& db) {
  TAKOSUMI_TRY(drop_share_target_reference(db));
  TAKOSUMI_TRY(add_column_if_missing(db, "connections", "kind", "TEXT NOT NULL DEFAULT 'provider'"));
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "git_connection_id", "TEXT"));
  auto urls = db.query("SELECT id, git_url FROM capsules WHERE git_url LIKE '%@%'");
  if (!urls) return std::unexpected(urls.error());
  std::vector<std::pair<std::string, std::string>> changed;
  while (true) {
    auto row = urls->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    std::string id = urls->text(0), url = urls->text(1);
    if (auto shown = protocol::display_source_url(url); shown != url) changed.emplace_back(id, shown);
  }
  for (const auto& [id, url] : changed)
    TAKOSUMI_TRY(db.run("UPDATE capsules SET git_url = ? WHERE id = ?", url, id));
  return {};
}

// v16 → v17: Capsules change (PATCH /api/v1/capsules/{id}). Each change is a new spec revision
// of the Capsule, kept (its name, source and Outputs' and variables' values as of then); a Run
// records the revision it was made from, and its manifest is built from that revision, not from
// what the Capsule is when the Run is claimed. A Capsule from before has revision 1 and no row:
// its revision 1 is what it is until its first change, which records it.
Status to_v17(Database& db) {
  TAKOSUMI_TRY(ddl(db, "CREATE TABLE IF NOT EXISTS capsule_revisions ("
                       " capsule_id TEXT NOT NULL REFERENCES capsules(id), revision INTEGER NOT NULL,"
                       " spec TEXT NOT NULL, created_at INTEGER NOT NULL,"
                       " PRIMARY KEY (capsule_id, revision));"));
  TAKOSUMI_TRY(add_column_if_missing(db, "capsules", "spec_revision", "INTEGER NOT NULL DEFAULT 1"));
  return add_column_if_missing(db, "runs", "spec_revision", "INTEGER NOT NULL DEFAULT 1");
}

// v17 → v18: a plan Run's plan view (GET /api/v1/runs/{id}/plan): the redacted JSON the agent
// made from the frozen plan, a blob like the plan envelope. plan_views lists what each Run's
// agents uploaded; runs.plan_view_sha256 is the one its report named.
Status to_v18(Database& db) {
  TAKOSUMI_TRY(ddl(db, "CREATE TABLE IF NOT EXISTS plan_views ("
                       " run_id TEXT NOT NULL REFERENCES runs(id), sha256 TEXT NOT NULL,"
                       " size INTEGER NOT NULL, created_at INTEGER NOT NULL,"
                       " PRIMARY KEY (run_id, sha256));"));
  return add_column_if_missing(db, "runs", "plan_view_sha256", "TEXT");
}

// One step of the schema, from version `to - 1` to `to`.
struct Migration {
  std::int64_t to;
  Status (*steps)(Database&);
  // Foreign keys are off while tables are rebuilt, as SQLite's documented table-rebuild
  // procedure requires, and checked before the commit.
  bool rebuilds_tables = false;
};

constexpr Migration kMigrations[] = {{2, to_v2, true}, {3, to_v3}, {4, to_v4}, {5, to_v5},
                                     {6, to_v6},       {7, to_v7}, {8, to_v8}, {9, to_v9},
                                     {10, to_v10},     {11, to_v11}, {12, to_v12}, {13, to_v13},
                                     {14, to_v14},     {15, to_v15}, {16, to_v16, true},
                                     {17, to_v17},     {18, to_v18}};
static_assert(std::size(kMigrations) == kSchemaVersion - 1, "one migration per schema version");

// Runs one migration in one transaction that also sets user_version: a database is at one
// version or the next, never between.
Status migrate(Database& db, const Migration& m) {
  if (m.rebuilds_tables) TAKOSUMI_TRY(db.exec("PRAGMA foreign_keys=OFF"));
  auto migrated = in_transaction(db, [&]() -> Status {
    TAKOSUMI_TRY(m.steps(db));
    if (m.rebuilds_tables) {
      auto broken = db.single_integer("SELECT count(*) FROM pragma_foreign_key_check");
      if (!broken) return std::unexpected(broken.error());
      if (*broken != 0)
        return fail(errc::kInternal,
                    std::to_string(*broken) + " foreign key violations after migration");
    }
    return db.exec("PRAGMA user_version = " + std::to_string(m.to));
  });
  if (m.rebuilds_tables)
    if (auto restored = db.exec("PRAGMA foreign_keys=ON"); migrated && !restored) return restored;
  return with_context(migrated,
                      "migrate schema " + std::to_string(m.to - 1) + " -> " + std::to_string(m.to));
}

Result<std::int64_t> stored_version(Database& db) {
  auto version = db.single_integer("PRAGMA user_version");
  if (!version || *version != 0) return version;
  auto tables = db.single_integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'");
  if (!tables) return std::unexpected(tables.error());
  return *tables > 0 ? 1 : 0;
}

// The tables every version creates from scratch, and then the columns later versions added to
// earlier tables (a migration adds them to an existing database the same way).
Status create_current_tables(Database& db) {
  std::string runs = create_runs_sql("\nCREATE TABLE IF NOT EXISTS runs");
  // runs and state_versions refer to each other. SQLite resolves references when rows are
  // written; PostgreSQL needs the table first, so this one is added once both exist.
  constexpr std::string_view kForward = "restores_state_version_id TEXT REFERENCES state_versions(id)";
  const bool postgres = db.driver() == StoreDriver::postgres;
  if (postgres) runs.replace(runs.find(kForward), kForward.size(), "restores_state_version_id TEXT");
  const std::string sql =
      std::string(kTablesBeforeRuns) + runs +
      std::string(kTablesAfterRuns) + std::string(kTablesV3) + std::string(kTablesV8) +
      std::string(kTablesV9) + std::string(kTablesV10);
  TAKOSUMI_TRY(ddl(db, sql));
  if (postgres)
    TAKOSUMI_TRY(db.exec("ALTER TABLE runs ADD CONSTRAINT runs_restores_state_version_fk FOREIGN KEY"
                         " (restores_state_version_id) REFERENCES state_versions(id)"));
  TAKOSUMI_TRY(db.exec(postgres ? kAppendOnlyPostgres : kAppendOnlySqlite));
  TAKOSUMI_TRY(to_v9(db));
  TAKOSUMI_TRY(to_v10(db));
  TAKOSUMI_TRY(to_v11(db));
  TAKOSUMI_TRY(to_v12(db));
  TAKOSUMI_TRY(to_v13(db));
  TAKOSUMI_TRY(to_v14(db));
  TAKOSUMI_TRY(to_v15(db));
  TAKOSUMI_TRY(to_v16(db));
  TAKOSUMI_TRY(to_v17(db));
  return to_v18(db);
}

// PostgreSQL keeps the version in a table of its own (it has no user_version). Its first version
// is 11: a PostgreSQL database is created at the version of its day and migrated from there.
constexpr std::int64_t kFirstPostgresVersion = 11;

Result<std::int64_t> stored_postgres_version(Database& db) {
  auto tables = db.single_integer(
      "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
      " AND table_name IN ('takosumi_schema', 'runs')");
  if (!tables) return std::unexpected(tables.error());
  if (*tables == 0) return 0;
  auto version = db.single_integer("SELECT version FROM takosumi_schema");
  if (!version)
    return fail(errc::kConfigInvalid,
                "the database has tables but no takosumi schema version; point store.url at a "
                "database of its own");
  return version;
}

Status migrate_postgres(Database& db) {
  return in_transaction(db, [&]() -> Status {  // the writers' lock: one migration at a time
    auto version = stored_postgres_version(db);
    if (!version) return std::unexpected(version.error());
    if (*version > kSchemaVersion)
      return fail(errc::kConfigInvalid,
                  "the database has schema version " + std::to_string(*version) +
                      " but this takosumi-control knows only up to " +
                      std::to_string(kSchemaVersion) + "; run a newer takosumi-control");
    if (*version == kSchemaVersion) return {};
    if (*version == 0) {
      TAKOSUMI_TRY(create_current_tables(db));
      TAKOSUMI_TRY(db.exec("CREATE TABLE takosumi_schema (version BIGINT NOT NULL)"));
      return db.run("INSERT INTO takosumi_schema (version) VALUES (?)", kSchemaVersion);
    }
    for (const Migration& m : kMigrations)
      if (m.to > kFirstPostgresVersion && *version < m.to) TAKOSUMI_TRY(m.steps(db));
    return db.run("UPDATE takosumi_schema SET version = ?", kSchemaVersion);
  });
}

}  // namespace

Result<std::int64_t> schema_version(Database& db) {
  return db.driver() == StoreDriver::sqlite ? stored_version(db) : stored_postgres_version(db);
}

Status check_schema_current(Database& db) {
  auto version = schema_version(db);
  if (!version) return std::unexpected(version.error());
  if (*version == kSchemaVersion) return {};
  if (*version > kSchemaVersion)
    return fail(errc::kConfigInvalid,
                "the database has schema version " + std::to_string(*version) +
                    " but this takosumi-control knows only up to " + std::to_string(kSchemaVersion) +
                    "; run a newer takosumi-control");
  return fail(errc::kConfigInvalid,
              "the database has schema version " + std::to_string(*version) + ", this "
              "takosumi-control needs " + std::to_string(kSchemaVersion) +
              ": run `takosumi-control migrate --config <control.yaml>` first (once, from one host)");
}

Status create_schema(Database& db) {
  if (db.driver() == StoreDriver::postgres)
    return with_context(migrate_postgres(db), "create schema");
  auto version = stored_version(db);
  if (!version) return std::unexpected(version.error().with_context("create schema"));
  if (*version > kSchemaVersion)
    return fail(errc::kConfigInvalid,
                "create schema: the database has schema version " + std::to_string(*version) +
                    " but this takosumi-control knows only up to " + std::to_string(kSchemaVersion) +
                    "; run a newer takosumi-control on this data directory");
  // A new database (version 0) is created at the current version below, with no migration.
  for (const Migration& m : kMigrations)
    if (*version >= 1 && *version < m.to) TAKOSUMI_TRY(migrate(db, m));
  TAKOSUMI_TRY(with_context(create_current_tables(db), "create schema"));
  return with_context(db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion)),
                      "create schema");
}

}  // namespace takosumi::controlplane
