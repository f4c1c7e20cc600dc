-- The schema of version 7 (PRAGMA user_version 7), verbatim as that release created it,
-- so the v7 -> v8 migration is tested against the real thing and not against today's DDL.
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

CREATE TABLE IF NOT EXISTS runs (
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
  apply_started_attempt INTEGER
);
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
CREATE TRIGGER IF NOT EXISTS state_versions_no_update BEFORE UPDATE ON state_versions
  BEGIN SELECT RAISE(ABORT, 'state versions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS state_versions_no_delete BEFORE DELETE ON state_versions
  BEGIN SELECT RAISE(ABORT, 'state versions are append-only'); END;

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
CREATE TRIGGER IF NOT EXISTS audit_events_no_update BEFORE UPDATE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_events_no_delete BEFORE DELETE ON audit_events
  BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
PRAGMA user_version = 7;
