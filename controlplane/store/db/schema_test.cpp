// Schema creation and the in-place migrations of a first-release database (no user_version,
// runs.type limited to plan/apply), of a version 2 to 7 and a version 14 database over real SQLite
// files.
#include "controlplane/store/db/schema.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "controlplane/store/agent_registry.hpp"
#include "controlplane/store/audit_log.hpp"
#include "controlplane/store/catalog_store.hpp"
#include "controlplane/store/connection_store.hpp"
#include "controlplane/store/run_store.hpp"
#include "controlplane/store/state_store.hpp"
#include "controlplane/testing/test_support.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/test_paths.hpp"

using takosumi::testing::FakeClock;

namespace takosumi::controlplane {
namespace {

using takosumi::testing::TempDir;

constexpr std::int64_t kCurrentVersion = 18;

// The frozen schema of an earlier release, testdata/schema_v<N>.sql, verbatim as that release
// created it: migrations are tested against the real thing and not against today's DDL.
std::string schema_snapshot(int version) {
  const auto file = std::filesystem::path(test_paths::source_dir) / "controlplane/testing/testdata" /
                    ("schema_v" + std::to_string(version) + ".sql");
  auto text = read_file(file, 1 << 20);
  EXPECT_TRUE(text) << text.error().to_string();
  return text ? std::move(*text) : std::string();
}

// The migrations of SQLite files of earlier releases (PostgreSQL starts at version 11).
Database open_sqlite_with_schema(const std::filesystem::path& file) {
  auto db = Database::open_sqlite(file);
  if (!db) throw std::runtime_error(db.error().to_string());
  if (auto st = create_schema(*db); !st) throw std::runtime_error(st.error().to_string());
  return std::move(*db);
}

std::int64_t single_integer(Database& db, std::string_view sql) {
  auto s = db.query(sql);
  if (!s || !*s->step()) return -1;
  return s->integer(0);
}

// A first-release database with one Capsule, a plan, its apply, the StateVersion it stored, the
// Outputs, an artifact and a log line.
void write_v1_database(const std::filesystem::path& file) {
  auto db = Database::open_sqlite(file);
  ASSERT_TRUE(db) << db.error().to_string();
  ASSERT_TRUE(db->exec(schema_snapshot(1)));
  ASSERT_TRUE(db->exec(R"sql(
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules VALUES ('cap_1', 'ws_1', 'app', 'file:///repo', 'main', '', '{}', '{}', 1);
INSERT INTO runs (id, capsule_id, type, status, source_commit, plan_digest, plan_artifact_sha256,
                  has_changes, created_at, prior_generation)
  VALUES ('run_plan', 'cap_1', 'plan', 'succeeded', 'c1', 'd', 'a', 1, 2, 0);
INSERT INTO runs (id, capsule_id, type, status, source_commit, planned_by, state_version_id,
                  created_at)
  VALUES ('run_apply', 'cap_1', 'apply', 'succeeded', 'c1', 'run_plan', 'sv_1', 3);
INSERT INTO state_versions VALUES ('sv_1', 'cap_1', 1, 'run_apply', 'c1', 1, 'l', 'p', 'x', 4);
INSERT INTO capsule_outputs VALUES ('cap_1', 'sv_1', 1, 'run_apply', '{"url":"u"}', 4);
INSERT INTO artifacts VALUES ('run_plan', 'plan', 'a', 10, 2);
INSERT INTO run_logs VALUES ('run_plan', 1, 0, 'Plan: 1 to add');
)sql"));
}

TEST(SchemaTest, FreshDatabaseHasTheCurrentVersionAndIsIdempotent) {
  TempDir dir;
  Database db = testing::open_test_db(dir.path() / "control.db");  // SQLite or PostgreSQL
  EXPECT_EQ(*schema_version(db), kCurrentVersion);
  EXPECT_TRUE(check_schema_current(db));
  EXPECT_TRUE(create_schema(db));
  EXPECT_EQ(*schema_version(db), kCurrentVersion);
}

TEST(SchemaTest, FirstReleaseDatabaseIsMigratedInPlace) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  ASSERT_NO_FATAL_FAILURE(write_v1_database(file));
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);

  FakeClock clock{100};
  CatalogStore catalog(db, clock);
  RunStore runs(db, clock);
  StateStore states(db, clock);
  auto apply = runs.get_run("run_apply");
  ASSERT_TRUE(apply) << apply.error().to_string();
  EXPECT_EQ(apply->planned_by, "run_plan");
  EXPECT_EQ(apply->state_version_id, "sv_1");
  EXPECT_FALSE(apply->data_loss_accepted);
  EXPECT_FALSE(apply->restores_state_version_id);
  EXPECT_EQ(runs.get_run("run_plan")->plan_digest, "d");
  auto sv = states.get("sv_1");
  ASSERT_TRUE(sv);
  EXPECT_FALSE(sv->restored_from);
  EXPECT_FALSE(sv->partial);
  EXPECT_FALSE(apply->apply_started_attempt);
  auto capsule = catalog.get_capsule("cap_1");
  ASSERT_TRUE(capsule);
  EXPECT_FALSE(capsule->destroyed_at);
  EXPECT_TRUE(capsule->connection_ids.empty());
  EXPECT_EQ(capsule->policy, protocol::RunPolicy{});
  EXPECT_EQ(capsule->agent_pool, "default") << "what was there before pools runs where it ran";
  EXPECT_TRUE(capsule->agent_labels.empty());
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM agent_pools WHERE name = 'default'"), 1);
  EXPECT_FALSE(apply->refused_outputs_json);
  EXPECT_EQ(states.outputs("cap_1")->generation, 1);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM run_logs"), 1);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM artifacts"), 1);

  // The new Run types fit, the old rules still hold.
  auto drift = runs.create_drift_checks({{*capsule, *sv}});
  ASSERT_TRUE(drift) << drift.error().to_string();
  EXPECT_EQ((*drift)[0].type, protocol::RunType::drift_check);
  EXPECT_TRUE(runs.create_destroy_plan(*capsule, "c1"));
  EXPECT_EQ(runs.create_apply(*runs.get_run("run_plan")).error().code, errc::kConflict);
  EXPECT_FALSE(db.run("UPDATE state_versions SET serial = 9"));
  EXPECT_FALSE(db.run("DELETE FROM state_versions"));
  EXPECT_TRUE(create_schema(db));  // and opening again is a no-op
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM runs"), 4);
}

TEST(SchemaTest, NewerDatabaseIsRefused) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  {
    Database db = open_sqlite_with_schema(file);
    ASSERT_TRUE(db.exec("PRAGMA user_version = " + std::to_string(kCurrentVersion + 1)));
  }
  auto db = Database::open_sqlite(file);
  ASSERT_TRUE(db);
  auto refused = create_schema(*db);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kConfigInvalid);
  EXPECT_NE(refused.error().message.find("newer takosumi-control"), std::string::npos);
}

// A version 2 database with a destroyed Capsule, a rollback plan and its apply, a drift check and
// the StateVersion the apply stored.
void write_v2_database(const std::filesystem::path& file) {
  auto db = Database::open_sqlite(file);
  ASSERT_TRUE(db) << db.error().to_string();
  ASSERT_TRUE(db->exec(schema_snapshot(2)));
  ASSERT_TRUE(db->exec(R"sql(
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules VALUES ('cap_1', 'ws_1', 'app', 'file:///repo', 'main', '', '{}',
                            '{"region":"eu"}', 1, 9);
INSERT INTO runs (id, capsule_id, type, status, source_commit, plan_digest, plan_artifact_sha256,
                  has_changes, created_at, prior_generation, data_loss)
  VALUES ('run_plan', 'cap_1', 'destroy_plan', 'succeeded', 'c1', 'd', 'a', 1, 2, 0, '[]');
INSERT INTO runs (id, capsule_id, type, status, source_commit, planned_by, state_version_id,
                  created_at, data_loss_accepted)
  VALUES ('run_apply', 'cap_1', 'apply', 'succeeded', 'c1', 'run_plan', 'sv_1', 3, 1);
INSERT INTO state_versions VALUES ('sv_1', 'cap_1', 1, 'run_apply', 'c1', 1, 'l', 'p', 'x', 4, NULL);
INSERT INTO runs (id, capsule_id, type, status, source_commit, prior_state_version_id,
                  prior_generation, created_at, drift)
  VALUES ('run_drift', 'cap_1', 'drift_check', 'succeeded', 'c1', 'sv_1', 1, 5,
          '{"status":"no_drift","resources":[]}');
INSERT INTO capsule_outputs VALUES ('cap_1', 'sv_1', 1, 'run_apply', '{}', 4);
INSERT INTO run_logs VALUES ('run_plan', 1, 0, 'Plan: 0 to add');
)sql"));
}

TEST(SchemaTest, VersionTwoDatabaseIsMigratedInPlace) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  ASSERT_NO_FATAL_FAILURE(write_v2_database(file));
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);

  FakeClock clock{100};
  CatalogStore catalog(db, clock);
  RunStore runs(db, clock);
  auto capsule = catalog.get_capsule("cap_1");
  ASSERT_TRUE(capsule) << capsule.error().to_string();
  EXPECT_EQ(capsule->destroyed_at, 9);
  EXPECT_EQ(capsule->variables.at("region"), "eu");
  EXPECT_TRUE(capsule->connection_ids.empty());
  EXPECT_TRUE(capsule->sensitive_variable_names.empty());
  auto apply = runs.get_run("run_apply");
  ASSERT_TRUE(apply) << apply.error().to_string();
  EXPECT_EQ(apply->planned_by, "run_plan");
  EXPECT_TRUE(apply->data_loss_accepted);
  EXPECT_FALSE(apply->refused_outputs_json);
  EXPECT_EQ(runs.get_run("run_drift")->drift_json, R"({"status":"no_drift","resources":[]})");
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM runs"), 3);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM run_logs"), 1);

  // The new tables work on the migrated file, and the audit trail is append-only.
  Keyring keys(crypto::BoxKeyPair::generate(), crypto::SignKeyPair::generate());
  ConnectionStore connections(db, keys, clock);
  ConnectionRequest req{"ws_1", "aws", "registry.opentofu.org/hashicorp/aws", protocol::AuthMode::env, {}, {}};
  req.values.emplace("AWS_ACCESS_KEY_ID", SecretBytes::from_string("AKIA"));
  auto created = connections.create(std::move(req));
  ASSERT_TRUE(created) << created.error().to_string();
  ASSERT_TRUE(catalog.set_connections("cap_1", {created->id}));
  EXPECT_EQ(catalog.get_capsule("cap_1")->connection_ids, std::vector<std::string>{created->id});
  AuditLog audit(db, clock);
  ASSERT_TRUE(audit.record({.actor = "api:x", .action = "test", .workspace_id = "ws_1"}));
  EXPECT_FALSE(db.run("UPDATE audit_events SET actor = 'y'"));
  EXPECT_FALSE(db.run("DELETE FROM audit_events"));
  EXPECT_TRUE(create_schema(db));
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
}

// A version 3 database with a Capsule that has a Connection and sensitive variables, a Run with
// refused Outputs, and audit events.
void write_v3_database(const std::filesystem::path& file) {
  auto db = Database::open_sqlite(file);
  ASSERT_TRUE(db) << db.error().to_string();
  ASSERT_TRUE(db->exec(schema_snapshot(3)));
  ASSERT_TRUE(db->exec(R"sql(
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules VALUES ('cap_1', 'ws_1', 'app', 'file:///repo', 'main', '', '{}',
                            '{"region":"eu"}', 1, NULL, '["db_password"]', 'sealed-text');
INSERT INTO connections (id, workspace_id, name, provider, auth_mode, credential_names,
                         sealed_values, created_at)
  VALUES ('conn_1', 'ws_1', 'aws', 'registry.opentofu.org/hashicorp/aws', 'env',
          '["AWS_ACCESS_KEY_ID"]', 'sealed-values', 2);
INSERT INTO capsule_connections VALUES ('cap_1', 'conn_1', 0);
INSERT INTO runs (id, capsule_id, type, status, source_commit, created_at, refused_outputs)
  VALUES ('run_plan', 'cap_1', 'plan', 'succeeded', 'c1', 3, '[{"name":"url","reason":"r"}]');
INSERT INTO audit_events (at, actor, action, workspace_id, capsule_id, detail)
  VALUES (1, 'api:x', 'capsule.created', 'ws_1', 'cap_1', '{"name":"app"}');
INSERT INTO audit_events (at, actor, action, workspace_id, capsule_id, run_id, detail)
  VALUES (3, 'api:x', 'run.created', 'ws_1', 'cap_1', 'run_plan', '{"type":"plan"}');
)sql"));
}

TEST(SchemaTest, VersionThreeDatabaseIsMigratedInPlace) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  ASSERT_NO_FATAL_FAILURE(write_v3_database(file));
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);

  FakeClock clock{100};
  CatalogStore catalog(db, clock);
  RunStore runs(db, clock);
  auto capsule = catalog.get_capsule("cap_1");
  ASSERT_TRUE(capsule) << capsule.error().to_string();
  EXPECT_EQ(capsule->policy, protocol::RunPolicy{}) << "existing Capsules get the default policy";
  EXPECT_EQ(capsule->variables.at("region"), "eu");
  EXPECT_EQ(capsule->connection_ids, std::vector<std::string>{"conn_1"});
  EXPECT_EQ(capsule->sensitive_variable_names, std::vector<std::string>{"db_password"});
  EXPECT_EQ(*catalog.sealed_sensitive_variables("cap_1"), "sealed-text");
  EXPECT_EQ(runs.get_run("run_plan")->refused_outputs_json, R"([{"name":"url","reason":"r"}])");
  AuditLog audit(db, clock);
  auto events = audit.list("ws_1", 10, std::nullopt);
  ASSERT_TRUE(events) << events.error().to_string();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].action, "run.created");

  // The new column takes a policy on the migrated file.
  protocol::RunPolicy policy;
  policy.denied_providers = {"registry.opentofu.org/hashicorp/aws"};
  policy.network = protocol::NetworkMode::none;
  ASSERT_TRUE(catalog.set_policy("cap_1", policy));
  EXPECT_EQ(catalog.get_capsule("cap_1")->policy, policy);
  EXPECT_TRUE(create_schema(db));
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(catalog.get_capsule("cap_1")->policy, policy);
}

// A version 4 database with a Capsule whose apply stored a StateVersion, and an apply Run that is
// still running with a lease.
void write_v4_database(const std::filesystem::path& file) {
  auto db = Database::open_sqlite(file);
  ASSERT_TRUE(db) << db.error().to_string();
  ASSERT_TRUE(db->exec(schema_snapshot(4)));
  ASSERT_TRUE(db->exec(R"sql(
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules (id, workspace_id, name, git_url, ref, module_path, output_allowlist,
                      variables, created_at, policy)
  VALUES ('cap_1', 'ws_1', 'app', 'file:///repo', 'main', '', '{}', '{}', 1,
          '{"allowProvisioners":true}');
INSERT INTO agents VALUES ('agt_1', 'worker', 'sign', 'box', 'tok', '0.1.0', '[]', 1, 1, 1);
INSERT INTO runs (id, capsule_id, type, status, source_commit, plan_digest, plan_artifact_sha256,
                  has_changes, created_at, prior_generation)
  VALUES ('run_plan', 'cap_1', 'plan', 'succeeded', 'c1', 'd', 'a', 1, 2, 0);
INSERT INTO runs (id, capsule_id, type, status, source_commit, planned_by, state_version_id,
                  created_at)
  VALUES ('run_apply', 'cap_1', 'apply', 'succeeded', 'c1', 'run_plan', 'sv_1', 3);
INSERT INTO state_versions VALUES ('sv_1', 'cap_1', 1, 'run_apply', 'c1', 1, 'l', 'p', 'x', 4, NULL);
INSERT INTO runs (id, capsule_id, type, status, source_commit, plan_digest, plan_artifact_sha256,
                  has_changes, created_at, prior_generation)
  VALUES ('run_plan2', 'cap_1', 'plan', 'succeeded', 'c2', 'd2', 'a2', 1, 5, 1);
INSERT INTO runs (id, capsule_id, type, status, attempt, source_commit, planned_by, agent_id,
                  lease_token_sha256, lease_expires_at, created_at)
  VALUES ('run_apply2', 'cap_1', 'apply', 'running', 2, 'c2', 'run_plan2', 'agt_1', 'h', 99, 6);
)sql"));
}

TEST(SchemaTest, VersionFourDatabaseIsMigratedInPlace) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  ASSERT_NO_FATAL_FAILURE(write_v4_database(file));
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM runs"), 4);

  FakeClock clock{100};
  CatalogStore catalog(db, clock);
  RunStore runs(db, clock);
  StateStore states(db, clock);
  auto sv = states.get("sv_1");
  ASSERT_TRUE(sv) << sv.error().to_string();
  EXPECT_FALSE(sv->partial) << "every v4 StateVersion came from a succeeded apply";
  EXPECT_EQ(sv->generation, 1);
  auto running = runs.get_run("run_apply2");
  ASSERT_TRUE(running) << running.error().to_string();
  EXPECT_EQ(running->status, run_status::kRunning);
  EXPECT_EQ(running->attempt, 2);
  EXPECT_EQ(running->lease_expires_at, 99);
  EXPECT_FALSE(running->apply_started_attempt) << "no v4 agent announced an apply";
  EXPECT_FALSE(running->stranded(clock.now_unix())) << "so its expired lease strands nothing";
  EXPECT_TRUE(catalog.get_capsule("cap_1")->policy.allow_provisioners);

  // The new columns take values on the migrated file; StateVersions stay append-only.
  ASSERT_TRUE(db.run("UPDATE runs SET apply_started_attempt = 2 WHERE id = 'run_apply2'"));
  EXPECT_TRUE(runs.get_run("run_apply2")->stranded(clock.now_unix()));
  StateVersion kept;
  kept.capsule_id = "cap_1";
  kept.created_by_run_id = "run_apply2";
  kept.source_commit = "c2";
  kept.lineage = "l";
  kept.plaintext_sha256 = "p2";
  kept.ciphertext_sha256 = "x2";
  kept.partial = true;
  auto appended = states.append(kept);
  ASSERT_TRUE(appended) << appended.error().to_string();
  EXPECT_EQ(appended->generation, 2);
  EXPECT_TRUE((*states.current("cap_1"))->partial);
  EXPECT_FALSE(db.run("UPDATE state_versions SET partial = 0"));
  EXPECT_TRUE(create_schema(db));
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM state_versions"), 2);
}

// A version 5 database with two agents of one name (the old rule made a new agent for a new key)
// and a Run leased to one of them.
void write_v5_database(const std::filesystem::path& file) {
  auto db = Database::open_sqlite(file);
  ASSERT_TRUE(db) << db.error().to_string();
  ASSERT_TRUE(db->exec(schema_snapshot(5)));
  ASSERT_TRUE(db->exec(R"sql(
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules (id, workspace_id, name, git_url, ref, module_path, output_allowlist,
                      variables, created_at)
  VALUES ('cap_1', 'ws_1', 'app', 'file:///repo', 'main', '', '{}', '{}', 1);
INSERT INTO agents VALUES ('agt_1', 'worker', 'sign-1', 'box-1', 'tok', '0.1.0', '[]', 1, 1, 1);
INSERT INTO agents VALUES ('agt_2', 'worker', 'sign-2', 'box-2', 'tok2', '0.1.0', '[]', 1, 2, 2);
INSERT INTO runs (id, capsule_id, type, status, attempt, source_commit, agent_id,
                  lease_token_sha256, lease_expires_at, created_at)
  VALUES ('run_plan', 'cap_1', 'plan', 'running', 1, 'c1', 'agt_1', 'h', 99, 3);
)sql"));
}

TEST(SchemaTest, VersionFiveDatabaseIsMigratedInPlace) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  ASSERT_NO_FATAL_FAILURE(write_v5_database(file));
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM agents WHERE key_reset_at IS NULL"), 2);
  FakeClock clock{100};
  RunStore runs(db, clock);
  EXPECT_EQ(runs.get_run("run_plan")->agent_id, "agt_1");

  // Each existing agent keeps its key; the name takes no third one until an operator resets one.
  AgentRegistry agents(db, clock);
  EXPECT_EQ(agents.register_agent({"worker", "2", {}, 1, "box-2b", "sign-2"})->agent_id, "agt_2");
  EXPECT_EQ(agents.register_agent({"worker", "2", {}, 1, "box-1", "sign-1"})->agent_id, "agt_1");
  auto third = agents.register_agent({"worker", "2", {}, 1, "box-3", "sign-3"});
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, errc::kAgentKeyMismatch);
  auto taken = agents.reset_keys("agt_1", "sign-2");
  ASSERT_FALSE(taken) << "agt_2 of the same name holds sign-2";
  EXPECT_EQ(taken.error().code, errc::kConflict);
  ASSERT_TRUE(agents.reset_keys("agt_1", "sign-3"));
  auto replaced = agents.register_agent({"worker", "2", {}, 1, "box-3", "sign-3"});
  ASSERT_TRUE(replaced) << replaced.error().to_string();
  EXPECT_EQ(replaced->agent_id, "agt_1");
  EXPECT_TRUE(replaced->keys_replaced);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM agents"), 2);
  EXPECT_TRUE(create_schema(db));
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
}

// A version 6 database with an agent whose keys an operator reset (a v6 reset names no key) and
// one in good standing, and a Run leased to the reset one.
void write_v6_database(const std::filesystem::path& file) {
  auto db = Database::open_sqlite(file);
  ASSERT_TRUE(db) << db.error().to_string();
  ASSERT_TRUE(db->exec(schema_snapshot(6)));
  ASSERT_TRUE(db->exec(R"sql(
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules (id, workspace_id, name, git_url, ref, module_path, output_allowlist,
                      variables, created_at)
  VALUES ('cap_1', 'ws_1', 'app', 'file:///repo', 'main', '', '{}', '{}', 1);
INSERT INTO agents VALUES ('agt_1', 'worker', 'sign-1', 'box-1', '', '0.1.0', '[]', 1, 1, 1, 5);
INSERT INTO agents VALUES ('agt_2', 'builder', 'sign-2', 'box-2', 'tok2', '0.1.0', '[]', 1, 2, 2,
                           NULL);
INSERT INTO runs (id, capsule_id, type, status, attempt, source_commit, agent_id,
                  lease_token_sha256, lease_expires_at, created_at)
  VALUES ('run_plan', 'cap_1', 'plan', 'running', 1, 'c1', 'agt_1', 'h', 99, 3);
)sql"));
}

TEST(SchemaTest, VersionSixDatabaseIsMigratedInPlace) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  ASSERT_NO_FATAL_FAILURE(write_v6_database(file));
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM agents WHERE reset_sign_public_key IS NULL"), 2);
  FakeClock clock{100};
  RunStore runs(db, clock);
  EXPECT_EQ(runs.get_run("run_plan")->agent_id, "agt_1");

  // The v6 reset named no key: it admits none, not even the first to come, until an operator
  // resets again naming one.
  AgentRegistry agents(db, clock);
  auto first_comer = agents.register_agent({"worker", "2", {}, 1, "box-x", "sign-x"});
  ASSERT_FALSE(first_comer);
  EXPECT_EQ(first_comer.error().code, errc::kAgentKeyMismatch);
  EXPECT_NE(first_comer.error().message.find("named no key"), std::string::npos)
      << first_comer.error().message;
  EXPECT_EQ(agents.register_agent({"builder", "2", {}, 1, "box-2", "sign-2"})->agent_id, "agt_2");
  ASSERT_TRUE(agents.reset_keys("agt_1", "sign-3"));
  EXPECT_FALSE(agents.register_agent({"worker", "2", {}, 1, "box-x", "sign-x"}));
  auto renewed = agents.register_agent({"worker", "2", {}, 1, "box-3", "sign-3"});
  ASSERT_TRUE(renewed) << renewed.error().to_string();
  EXPECT_EQ(renewed->agent_id, "agt_1");
  EXPECT_TRUE(renewed->keys_replaced);
  // v10: both registrations started their credentials' lifetimes; neither agent is revoked.
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM agents WHERE revoked_at IS NULL"
                               " AND token_issued_at = 100"), 2);
  // v11: none left by itself; a deregistered agent lists as such and its token stops working.
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM agents WHERE deregistered_at IS NULL"), 2);
  auto worker = agents.authenticate(renewed->agent_token);
  ASSERT_TRUE(worker) << worker.error().to_string();
  ASSERT_TRUE(agents.deregister(*worker));
  EXPECT_TRUE(agents.get("agt_1")->deregistered_at.has_value());
  EXPECT_FALSE(agents.get("agt_1")->token_expires_at.has_value());
  EXPECT_EQ(agents.authenticate(renewed->agent_token).error().code, errc::kUnauthorized);
  // It may come back later with its key.
  auto back = agents.register_agent({"worker", "2", {}, 1, "box-3", "sign-3"});
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_FALSE(agents.get("agt_1")->deregistered_at.has_value());
  EXPECT_TRUE(create_schema(db));
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
}

// A v7 database: a Capsule of two and a Run that took nothing from any Dependency.
TEST(SchemaTest, VersionSevenDatabaseIsMigratedInPlace) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  {
    auto db = Database::open_sqlite(file);
    ASSERT_TRUE(db) << db.error().to_string();
    ASSERT_TRUE(db->exec(schema_snapshot(7)));
    ASSERT_TRUE(db->exec(R"sql(
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules (id, workspace_id, name, git_url, ref, module_path, output_allowlist,
                      variables, created_at)
  VALUES ('cap_1', 'ws_1', 'app', 'file:///repo', 'main', '', '{}', '{}', 1),
         ('cap_2', 'ws_1', 'db', 'file:///repo', 'main', '', '{}', '{}', 1);
INSERT INTO runs (id, capsule_id, type, status, source_commit, created_at)
  VALUES ('run_plan', 'cap_1', 'plan', 'succeeded', 'c1', 3);
)sql"));
  }
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  FakeClock clock{100};
  RunStore runs(db, clock);
  auto run = runs.get_run("run_plan");
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_FALSE(run->dependency_inputs_json.has_value());
  EXPECT_TRUE(db.exec("INSERT INTO dependencies (id, workspace_id, consumer_capsule_id,"
                      " producer_capsule_id, outputs, created_at)"
                      " VALUES ('dep_1', 'ws_1', 'cap_1', 'cap_2', '{}', 4)"));
  EXPECT_TRUE(create_schema(db));
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM dependencies"), 1);
  // v9: no Dependency went through a share before; tokens and shares start empty.
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM dependencies WHERE output_share_id IS NULL"), 1);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM api_tokens"), 0);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM output_shares"), 0);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pool_tokens"), 0);
}

// A v14 database (its default pool as every v14 database has it): a Capsule and a Run from before
// a Capsule named its OpenTofu versions and a Run recorded the build it used.
TEST(SchemaTest, VersionFourteenDatabaseIsMigratedInPlace) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  {
    auto db = Database::open_sqlite(file);
    ASSERT_TRUE(db) << db.error().to_string();
    ASSERT_TRUE(db->exec(schema_snapshot(14)));
    ASSERT_TRUE(db->exec(R"sql(
INSERT INTO agent_pools (name, labels, created_by, created_at)
  VALUES ('default', '[]', 'control-plane', 0);
INSERT INTO agent_pool_workspaces (pool, workspace_id) VALUES ('default', '*');
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules (id, workspace_id, name, git_url, ref, module_path, output_allowlist,
                      variables, created_at, policy)
  VALUES ('cap_1', 'ws_1', 'app', 'file:///repo', 'main', '', '{}', '{}', 1,
          '{"network":"none"}');
INSERT INTO runs (id, capsule_id, type, status, source_commit, created_at, tofu_version)
  VALUES ('run_plan', 'cap_1', 'plan', 'succeeded', 'c1', 3, 'OpenTofu v1.10.6');
)sql"));
  }
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  FakeClock clock{100};
  CatalogStore catalog(db, clock);
  RunStore runs(db, clock);
  auto capsule = catalog.get_capsule("cap_1");
  ASSERT_TRUE(capsule) << capsule.error().to_string();
  EXPECT_EQ(capsule->policy.network, protocol::NetworkMode::none);
  EXPECT_FALSE(capsule->opentofu_version) << "any version, as before";
  auto run = runs.get_run("run_plan");
  ASSERT_TRUE(run) << run.error().to_string();
  EXPECT_EQ(run->tofu_version, "OpenTofu v1.10.6");
  EXPECT_FALSE(run->tofu_build);

  ASSERT_TRUE(catalog.set_opentofu_version("cap_1", "~> 1.10.0"));
  EXPECT_EQ(catalog.get_capsule("cap_1")->opentofu_version, "~> 1.10.0");
  ASSERT_TRUE(db.run("UPDATE runs SET tofu_build = ? WHERE id = ?", "1.10.6", "run_plan"));
  EXPECT_EQ(runs.get_run("run_plan")->tofu_build, "1.10.6");
  EXPECT_TRUE(create_schema(db));
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM capsules WHERE opentofu_version IS NOT NULL"),
            1);
}

// v16: a gitUrl that kept a password or token loses it in the database itself (not only where it
// is shown); Connections are of kind provider; a Capsule names no source Connection.
TEST(SchemaTest, CredentialsInStoredSourceUrlsAreRemovedByTheMigration) {
  TempDir dir;
  const auto file = dir.path() / "control.db";
  {
    auto db = Database::open_sqlite(file);
    ASSERT_TRUE(db) << db.error().to_string();
    ASSERT_TRUE(db->exec(schema_snapshot(14)));
    ASSERT_TRUE(db->exec(R"sql(
INSERT INTO agent_pools (name, labels, created_by, created_at)
  VALUES ('default', '[]', 'control-plane', 0);
INSERT INTO agent_pool_workspaces (pool, workspace_id) VALUES ('default', '*');
INSERT INTO workspaces VALUES ('ws_1', 'demo', 1);
INSERT INTO capsules (id, workspace_id, name, git_url, ref, module_path, output_allowlist,
                      variables, created_at, policy)
  VALUES ('cap_1', 'ws_1', 'app', 'https://deploy:hunter2-secret@git.example.com/a.git', 'main',
          '', '{}', '{}', 1, '{}'),
         ('cap_2', 'ws_1', 'ssh', 'ssh://git:pw-secret@git.example.com/b.git', 'main', '', '{}',
          '{}', 1, '{}'),
         ('cap_3', 'ws_1', 'plain', 'https://git.example.com/c@d.git', 'main', '', '{}', '{}', 1,
          '{}');
INSERT INTO connections (id, workspace_id, name, provider, auth_mode, credential_names,
                         sealed_values, created_at)
  VALUES ('conn_1', 'ws_1', 'aws', 'registry.opentofu.org/hashicorp/aws', 'env', '["A"]', 'x', 1);
)sql"));
  }
  Database db = open_sqlite_with_schema(file);
  EXPECT_EQ(single_integer(db, "PRAGMA user_version"), kCurrentVersion);
  FakeClock clock{100};
  CatalogStore catalog(db, clock);
  EXPECT_EQ(catalog.get_capsule("cap_1")->source.git_url, "https://git.example.com/a.git");
  EXPECT_EQ(catalog.get_capsule("cap_2")->source.git_url, "ssh://git@git.example.com/b.git");
  EXPECT_EQ(catalog.get_capsule("cap_3")->source.git_url, "https://git.example.com/c@d.git");
  EXPECT_FALSE(catalog.get_capsule("cap_1")->source.connection_id);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM capsules WHERE git_url LIKE '%secret%'"), 0);
  EXPECT_EQ(single_integer(db, "SELECT count(*) FROM connections WHERE kind = 'provider'"), 1);
}

}  // namespace
}  // namespace takosumi::controlplane
