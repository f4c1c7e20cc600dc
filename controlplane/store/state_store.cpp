#include "controlplane/store/state_store.hpp"

#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kColumns =
    "SELECT id, capsule_id, generation, created_by_run_id, source_commit, serial, lineage,"
    " plaintext_sha256, ciphertext_sha256, created_at, restored_from, partial FROM state_versions ";

StateVersion from_row(const Statement& s) {
  StateVersion v;
  ColumnReader(s) >> v.id >> v.capsule_id >> v.generation >> v.created_by_run_id >>
      v.source_commit >> v.serial >> v.lineage >> v.plaintext_sha256 >> v.ciphertext_sha256 >>
      v.created_at >> v.restored_from >> v.partial;
  return v;
}

}  // namespace

Result<std::optional<StateVersion>> StateStore::current(std::string_view capsule_id) {
  auto all = collect(
      db_.query(std::string(kColumns) + "WHERE capsule_id = ? ORDER BY generation DESC LIMIT 1",
                capsule_id),
      from_row);
  if (!all) return std::unexpected(all.error());
  if (all->empty()) return std::optional<StateVersion>{};
  return std::optional<StateVersion>(std::move(all->front()));
}

Result<StateVersion> StateStore::get(std::string_view id) {
  auto all = collect(db_.query(std::string(kColumns) + "WHERE id = ?", id), from_row);
  if (!all) return std::unexpected(all.error());
  if (all->empty()) return fail(errc::kNotFound, "state version " + std::string(id) + " not found");
  return std::move(all->front());
}

Result<std::vector<StateVersion>> StateStore::list(std::string_view capsule_id, int limit,
                                                   std::optional<std::int64_t> before) {
  auto s = db_.query(std::string(kColumns) +
                         "WHERE capsule_id = ? AND (? IS NULL OR generation < ?)"
                         " ORDER BY generation DESC LIMIT ?",
                     capsule_id, before, before, limit);
  return collect(std::move(s), from_row);
}

Result<StateVersion> StateStore::append(StateVersion sv) {
  auto cur = current(sv.capsule_id);
  if (!cur) return std::unexpected(cur.error());
  sv.id = crypto::new_id("sv");
  sv.generation = (*cur ? (*cur)->generation : 0) + 1;
  sv.created_at = clock_.now_unix();
  if (auto st = insert(sv); !st)
    return std::unexpected(st.error().with_context("append state version"));
  return sv;
}

Status StateStore::import(const StateVersion& sv) {
  auto cur = current(sv.capsule_id);
  if (!cur) return std::unexpected(cur.error());
  const std::int64_t next = (*cur ? (*cur)->generation : 0) + 1;
  if (sv.generation != next)
    return fail(errc::kConflict, "capsule " + sv.capsule_id + " is at generation " +
                                     std::to_string(next - 1) + " here; state version " + sv.id +
                                     " (generation " + std::to_string(sv.generation) +
                                     ") does not follow it");
  return with_context(insert(sv), "import state version " + sv.id);
}

Status StateStore::insert(const StateVersion& sv) {
  return db_.run(
      "INSERT INTO state_versions (id, capsule_id, generation, created_by_run_id, source_commit,"
      " serial, lineage, plaintext_sha256, ciphertext_sha256, created_at, restored_from, partial)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      sv.id, sv.capsule_id, sv.generation, sv.created_by_run_id, sv.source_commit, sv.serial,
      sv.lineage, sv.plaintext_sha256, sv.ciphertext_sha256, sv.created_at, sv.restored_from,
      sv.partial);
}

Result<CapsuleOutputs> StateStore::outputs(std::string_view capsule_id) {
  auto s = db_.query(
      "SELECT state_version_id, generation, outputs FROM capsule_outputs WHERE capsule_id = ?",
      capsule_id);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return CapsuleOutputs{};
  auto values = parse_object(s->text(2), 16 << 20);
  if (!values) return fail(errc::kInternal, "stored outputs of " + std::string(capsule_id) + " are corrupt");
  return CapsuleOutputs{s->optional_text(0), s->integer(1), std::move(*values)};
}

Status StateStore::set_outputs(std::string_view capsule_id, std::string_view run_id,
                               const std::optional<StateVersion>& version,
                               const boost::json::object& values) {
  std::optional<std::string> sv_id;
  std::int64_t generation = 0;
  if (version) {
    sv_id = version->id;
    generation = version->generation;
  }
  return db_.run(
      "INSERT INTO capsule_outputs (capsule_id, state_version_id, generation, run_id, outputs,"
      " updated_at) VALUES (?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (capsule_id) DO UPDATE SET state_version_id = excluded.state_version_id,"
      " generation = excluded.generation, run_id = excluded.run_id, outputs = excluded.outputs,"
      " updated_at = excluded.updated_at",
      capsule_id, sv_id, generation, run_id, takosumi::serialize(values), clock_.now_unix());
}

}  // namespace takosumi::controlplane
