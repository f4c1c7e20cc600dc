#include "controlplane/store/db/store_copy.hpp"

#include <algorithm>
#include <functional>
#include <array>
#include <string_view>
#include <vector>

namespace takosumi::controlplane {
namespace {

// In an order every reference points backwards in: a row's referent is copied before it. runs
// and state_versions refer to each other; a Run's restores_state_version_id is set afterwards.
constexpr std::array<std::string_view, 26> kCopied{
    "workspaces",     "capsules",        "capsule_revisions",    "capsule_agent_labels", "agent_pools",
    "agent_pool_workspaces", "agents",   "connections",          "capsule_connections",
    "api_tokens",     "api_token_roles", "pool_tokens",          "runs",
    "state_versions", "capsule_outputs", "artifacts",            "run_logs",
    "audit_events",   "output_shares",   "dependencies",         "workspace_plans",
    "workspace_plan_steps", "backups", "kept_results", "run_bundles", "plan_views"};
// Not moved: the keys binding (bind_keys records the same keys in the target) and registration
// challenges (single-use, minutes long).
constexpr std::array<std::string_view, 2> kNotCopied{"control_plane_keys",
                                                     "registration_challenges"};

struct Column {
  std::string name;
  bool integer = false;
};

bool known(std::string_view table) {
  return std::ranges::find(kCopied, table) != kCopied.end() ||
         std::ranges::find(kNotCopied, table) != kNotCopied.end();
}

Result<std::vector<std::string>> source_tables(Database& source) {
  return collect(source.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT"
                              " LIKE 'sqlite_%' ORDER BY name"),
                 [](const Statement& s) { return s.text(0); });
}

Result<std::vector<Column>> columns_of(Database& source, std::string_view table) {
  return collect(source.query("SELECT name, upper(type) FROM pragma_table_info(?) ORDER BY cid",
                              table),
                 [](const Statement& s) {
                   return Column{s.text(0), s.text(1).find("INT") != std::string::npos};
                 });
}

Result<std::int64_t> count(Database& db, std::string_view table) {
  return db.single_integer("SELECT count(*) FROM " + std::string(table));
}

// "empty": nothing but what a new schema holds (the default agent pool); "same": as many rows of
// every table as the source; "other": anything else.
enum class TargetHolds { empty, same, other };

Result<TargetHolds> compare(Database& source, Database& target,
                            const std::vector<std::string>& tables, std::string& first_difference) {
  bool empty = true, same = true;
  for (const auto& table : tables) {
    if (std::ranges::find(kNotCopied, table) != kNotCopied.end()) continue;
    auto theirs = count(target, table);
    auto ours = count(source, table);
    if (!theirs) return std::unexpected(theirs.error().with_context("target table " + table));
    if (!ours) return std::unexpected(ours.error());
    // A new schema holds the default pool, open to every Workspace.
    const std::int64_t fresh = table == "agent_pools" || table == "agent_pool_workspaces" ? 1 : 0;
    if (*theirs != fresh) empty = false;
    if (*theirs != *ours && first_difference.empty())
      first_difference = table + ": " + std::to_string(*theirs) + " row(s) there, " +
                         std::to_string(*ours) + " in the source";
    if (*theirs != *ours) same = false;
  }
  if (empty) return TargetHolds::empty;
  return same ? TargetHolds::same : TargetHolds::other;
}

Status copy_row(Database& target, const std::string& insert, const std::string& table,
                const std::vector<Column>& columns, const Statement& row) {
  auto stmt = target.prepare(insert);
  if (!stmt) return std::unexpected(stmt.error());
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const int c = static_cast<int>(i);
    const int parameter = c + 1;
    // The restore point is set once the StateVersions exist (restores_state_version_id below).
    if (row.is_null(c) || (table == "runs" && columns[i].name == "restores_state_version_id")) {
      if (columns[i].integer)
        stmt->bind(parameter, std::optional<std::int64_t>());
      else
        stmt->bind(parameter, std::nullopt);
    } else if (columns[i].integer) {
      stmt->bind(parameter, row.integer(c));
    } else {
      // Text from before NUL bytes were kept out of the store (tool output in logs, failure
      // messages, lineage) is moved as the store keeps such text now.
      stmt->bind(parameter, without_nul(row.text(c)));
    }
  }
  return stmt->run();
}

Result<std::int64_t> copy_table(Database& source, Database& target, const std::string& table) {
  auto columns = columns_of(source, table);
  if (!columns) return std::unexpected(columns.error());
  std::string names, values;
  for (std::size_t i = 0; i < columns->size(); ++i) {
    names += (i ? ", " : "") + (*columns)[i].name;
    values += i ? ", ?" : "?";
  }
  // The target's default agent pool exists already; the source's may have other labels by now.
  std::string insert = "INSERT INTO " + table + " (" + names + ") VALUES (" + values + ")";
  if (table == "agent_pools")
    insert += " ON CONFLICT (name) DO UPDATE SET labels = excluded.labels,"
              " created_by = excluded.created_by, created_at = excluded.created_at";
  if (table == "agent_pool_workspaces") insert += " ON CONFLICT DO NOTHING";
  auto rows = source.query("SELECT " + names + " FROM " + table + " ORDER BY rowid");
  if (!rows) return std::unexpected(rows.error());
  std::int64_t copied = 0;
  for (;;) {
    auto more = rows->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) break;
    TAKOSUMI_TRY(with_context(copy_row(target, insert, table, *columns, *rows),
                              "copy " + table + " row " + std::to_string(copied + 1)));
    ++copied;
  }
  return copied;
}

// The restore points of rollback Runs, now that their StateVersions are there.
Status copy_restore_points(Database& source, Database& target) {
  auto rows = source.query("SELECT id, restores_state_version_id FROM runs"
                           " WHERE restores_state_version_id IS NOT NULL ORDER BY rowid");
  if (!rows) return std::unexpected(rows.error());
  for (;;) {
    auto more = rows->step();
    if (!more) return std::unexpected(more.error());
    if (!*more) return {};
    TAKOSUMI_TRY(target.run("UPDATE runs SET restores_state_version_id = ? WHERE id = ?",
                            rows->text(1), rows->text(0)));
  }
}

}  // namespace

Result<StoreCopyReport> copy_records(Database& source, Database& target,
                                     const std::function<Status()>& before_commit) {
  auto tables = source_tables(source);
  if (!tables) return std::unexpected(tables.error());
  for (const auto& table : *tables)
    if (!known(table))
      return fail(errc::kInternal, "the source has a table \"" + table +
                                       "\" this takosumi-control cannot move; use the "
                                       "takosumi-control of the same version as the source");
  StoreCopyReport report;
  std::string difference;
  // Read and written under the target's writers' lock: no control plane can add records to it
  // between the check and the copy.
  Transaction tx(target);
  TAKOSUMI_TRY(tx.begun());
  auto holds = compare(source, target, *tables, difference);
  if (!holds) return std::unexpected(holds.error());
  if (*holds == TargetHolds::same) {
    report.already_copied = true;
    if (before_commit) TAKOSUMI_TRY(before_commit());
    TAKOSUMI_TRY(tx.commit());
    return report;
  }
  if (*holds == TargetHolds::other)
    return fail(errc::kConflict,
                "the target database holds other records already (" + difference +
                    "): migrate-store fills an empty store only; give it a new database");
  for (std::string_view name : kCopied) {
    const std::string table(name);
    if (std::ranges::find(*tables, table) == tables->end()) continue;
    auto copied = copy_table(source, target, table);
    if (!copied) return std::unexpected(copied.error());
    ++report.tables;
    report.rows += *copied;
  }
  TAKOSUMI_TRY(copy_restore_points(source, target));
  // The audit ids were copied as they were: the identity that numbers new events starts after
  // them (it would hand out 1, 2, … and collide with every copied one).
  TAKOSUMI_TRY(target.single_integer("SELECT setval(pg_get_serial_sequence('audit_events', 'id'),"
                                     " coalesce(max(id), 0) + 1, false) FROM audit_events"));
  if (before_commit) TAKOSUMI_TRY(before_commit());
  TAKOSUMI_TRY(tx.commit());
  return report;
}

Result<std::string> missing_blobs(Database& target) {
  auto rows = target.query(
      "SELECT 'state_versions ' || ciphertext_sha256 FROM state_versions s WHERE NOT EXISTS"
      " (SELECT 1 FROM blobs b WHERE b.sha256 = s.ciphertext_sha256)"
      " UNION ALL SELECT 'backups ' || sha256 FROM backups k WHERE NOT EXISTS"
      " (SELECT 1 FROM blobs b WHERE b.sha256 = k.sha256) LIMIT 5");
  auto missing = collect(std::move(rows), [](const Statement& s) { return s.text(0); });
  if (!missing) return std::unexpected(missing.error());
  std::string out;
  for (const auto& m : *missing) out += (out.empty() ? "" : ", ") + m;
  return out;
}

}  // namespace takosumi::controlplane
