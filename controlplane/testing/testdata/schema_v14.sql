-- The schema of version 14 (PRAGMA user_version 14), verbatim as that release created it (its
-- sqlite_master, less SQLite's own sqlite_sequence), so the v14 -> v15 migration is tested against
-- the real thing and not against today's DDL.
CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL);
CREATE TABLE capsules (
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
  policy TEXT NOT NULL DEFAULT '{}', restore_pending TEXT, state_pending INTEGER, agent_pool TEXT NOT NULL DEFAULT 'default', agent_labels TEXT NOT NULL DEFAULT '[]',
  UNIQUE (workspace_id, name));
CREATE TABLE agents (
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
  reset_sign_public_key TEXT, certificate_identity TEXT, revoked_at INTEGER, token_issued_at INTEGER, previous_token_sha256 TEXT, previous_token_expires_at INTEGER, pool_token_id TEXT, busy_slots INTEGER, deregistered_at INTEGER, pool TEXT NOT NULL DEFAULT 'default',
  UNIQUE (name, sign_public_key));
CREATE INDEX agents_by_token ON agents(token_sha256);
CREATE TABLE runs (
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
);
CREATE UNIQUE INDEX runs_one_apply_per_plan ON runs(planned_by)
  WHERE planned_by IS NOT NULL;
CREATE INDEX runs_by_status ON runs(status);
CREATE INDEX runs_by_capsule ON runs(capsule_id);
CREATE TABLE state_versions (
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
CREATE TABLE capsule_outputs (
  capsule_id TEXT PRIMARY KEY REFERENCES capsules(id),
  state_version_id TEXT REFERENCES state_versions(id),
  generation INTEGER NOT NULL,
  run_id TEXT NOT NULL REFERENCES runs(id),
  outputs TEXT NOT NULL,
  updated_at INTEGER NOT NULL);
CREATE TABLE artifacts (
  run_id TEXT NOT NULL REFERENCES runs(id),
  kind TEXT NOT NULL CHECK (kind IN ('state', 'plan')),
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, kind, sha256));
CREATE TABLE run_logs (
  run_id TEXT NOT NULL REFERENCES runs(id),
  attempt INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (run_id, attempt, seq));
CREATE TABLE connections (
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
CREATE TABLE capsule_connections (
  capsule_id TEXT NOT NULL REFERENCES capsules(id),
  connection_id TEXT NOT NULL REFERENCES connections(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (capsule_id, connection_id));
CREATE INDEX capsule_connections_by_connection ON capsule_connections(connection_id);
CREATE TABLE audit_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  workspace_id TEXT,
  capsule_id TEXT,
  run_id TEXT,
  connection_id TEXT,
  detail TEXT NOT NULL);
CREATE INDEX audit_events_by_workspace ON audit_events(workspace_id, id);
CREATE TABLE dependencies (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  consumer_capsule_id TEXT NOT NULL REFERENCES capsules(id),
  producer_capsule_id TEXT NOT NULL REFERENCES capsules(id),
  outputs TEXT NOT NULL,
  created_at INTEGER NOT NULL, output_share_id TEXT REFERENCES output_shares(id),
  UNIQUE (consumer_capsule_id, producer_capsule_id));
CREATE INDEX dependencies_by_producer ON dependencies(producer_capsule_id);
CREATE TABLE api_tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL UNIQUE,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER,
  last_used_at INTEGER);
CREATE TABLE api_token_roles (
  token_id TEXT NOT NULL REFERENCES api_tokens(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'owner')),
  PRIMARY KEY (token_id, workspace_id));
CREATE INDEX api_token_roles_by_workspace ON api_token_roles(workspace_id);
CREATE TABLE output_shares (
  id TEXT PRIMARY KEY,
  producer_capsule_id TEXT NOT NULL REFERENCES capsules(id),
  from_workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  to_workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  outputs TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'revoked')),
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  approved_by TEXT,
  approved_at INTEGER,
  revoked_by TEXT,
  revoked_at INTEGER);
CREATE INDEX output_shares_from ON output_shares(from_workspace_id);
CREATE INDEX output_shares_to ON output_shares(to_workspace_id);
CREATE TABLE workspace_plans (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  finished_at INTEGER);
CREATE INDEX workspace_plans_by_workspace ON workspace_plans(workspace_id);
CREATE TABLE workspace_plan_steps (
  workspace_plan_id TEXT NOT NULL REFERENCES workspace_plans(id),
  capsule_id TEXT NOT NULL REFERENCES capsules(id),
  position INTEGER NOT NULL,
  source_commit TEXT NOT NULL,
  producers TEXT NOT NULL,
  plan_run_id TEXT REFERENCES runs(id),
  PRIMARY KEY (workspace_plan_id, capsule_id));
CREATE TABLE backups (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  origin TEXT NOT NULL CHECK (origin IN ('created', 'restored')),
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL);
CREATE INDEX backups_by_workspace ON backups(workspace_id);
CREATE TABLE pool_tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL UNIQUE,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER, pool TEXT NOT NULL DEFAULT 'default');
CREATE TRIGGER state_versions_no_update BEFORE UPDATE ON state_versions
  BEGIN SELECT RAISE(ABORT, 'state versions are append-only'); END;
CREATE TRIGGER state_versions_no_delete BEFORE DELETE ON state_versions
  BEGIN SELECT RAISE(ABORT, 'state versions are append-only'); END;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE INDEX agents_by_previous_token ON agents(previous_token_sha256);
CREATE TABLE control_plane_keys (storage_public_key TEXT NOT NULL, signing_public_key TEXT NOT NULL);
CREATE TABLE registration_challenges (challenge_sha256 TEXT PRIMARY KEY, pool_token_sha256 TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE agent_pools (name TEXT PRIMARY KEY, labels TEXT NOT NULL, created_by TEXT NOT NULL, created_at INTEGER NOT NULL, offline INTEGER NOT NULL DEFAULT 0);
CREATE TABLE agent_pool_workspaces ( pool TEXT NOT NULL REFERENCES agent_pools(name), workspace_id TEXT NOT NULL, PRIMARY KEY (pool, workspace_id));
CREATE TABLE capsule_agent_labels ( capsule_id TEXT NOT NULL REFERENCES capsules(id), label TEXT NOT NULL, PRIMARY KEY (capsule_id, label));
CREATE TABLE kept_results ( run_id TEXT NOT NULL REFERENCES runs(id), sha256 TEXT NOT NULL, capsule_id TEXT NOT NULL, agent_id TEXT NOT NULL, code TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (run_id, sha256));
CREATE TABLE run_bundles ( run_id TEXT NOT NULL REFERENCES runs(id), attempt INTEGER NOT NULL, agent_id TEXT NOT NULL, sha256 TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (run_id, attempt));
PRAGMA user_version = 14;
