#include "controlplane/store/output_share_store.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "controlplane/store/db/stored_names.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kSelect =
    "SELECT id, producer_capsule_id, from_workspace_id, to_workspace_id, outputs, status,"
    " created_by, created_at, approved_by, approved_at, revoked_by, revoked_at FROM output_shares";

Result<OutputShare> share_from_row(const Statement& s) {
  OutputShare o;
  std::string outputs;
  ColumnReader(s) >> o.id >> o.producer_capsule_id >> o.from_workspace_id >> o.to_workspace_id >>
      outputs >> o.status >> o.created_by >> o.created_at >> o.approved_by >> o.approved_at >>
      o.revoked_by >> o.revoked_at;
  auto names = names_from_text(outputs);
  if (!names) return fail(errc::kInternal, "output share " + o.id + ": stored outputs are corrupt");
  o.outputs = std::move(*names);
  return o;
}

}  // namespace

Result<OutputShare> OutputShareStore::create(const Capsule& producer,
                                             std::string_view to_workspace_id,
                                             std::vector<std::string> outputs,
                                             std::string_view actor) {
  std::sort(outputs.begin(), outputs.end());
  OutputShare o{.id = crypto::new_id("share"), .producer_capsule_id = producer.id,
                .from_workspace_id = producer.workspace_id,
                .to_workspace_id = std::string(to_workspace_id), .outputs = std::move(outputs),
                .status = std::string(share_status::kPending), .created_by = std::string(actor),
                .created_at = clock_.now_unix()};
  TAKOSUMI_TRY(db_.run("INSERT INTO output_shares (id, producer_capsule_id, from_workspace_id,"
                       " to_workspace_id, outputs, status, created_by, created_at)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       o.id, o.producer_capsule_id, o.from_workspace_id, o.to_workspace_id,
                       names_to_text(o.outputs), o.status, o.created_by, o.created_at));
  return o;
}

Result<std::int64_t> OutputShareStore::count_pending_from(std::string_view workspace_id) {
  return one_row(db_.query("SELECT count(*) FROM output_shares WHERE from_workspace_id = ? AND"
                           " status = 'pending'",
                           workspace_id),
                 "output shares", [](const Statement& s) { return s.integer(0); });
}

Result<OutputShare> OutputShareStore::get(std::string_view id) {
  return one_row(db_.query(std::string(kSelect) + " WHERE id = ?", id),
                 "output share " + std::string(id), share_from_row);
}

Result<std::vector<OutputShare>> OutputShareStore::list(std::string_view workspace_id) {
  return collect(db_.query(std::string(kSelect) +
                               " WHERE from_workspace_id = ?1 OR to_workspace_id = ?1"
                               " ORDER BY created_at, rowid",
                           workspace_id),
                 share_from_row);
}

Result<OutputShare> OutputShareStore::approve(std::string_view id, std::string_view actor) {
  TAKOSUMI_TRY(db_.run("UPDATE output_shares SET status = 'active', approved_by = ?,"
                       " approved_at = ? WHERE id = ? AND status = 'pending'",
                       actor, clock_.now_unix(), id));
  const bool approved_now = db_.changes() > 0;
  auto share = get(id);
  if (share && !approved_now && share->status != share_status::kActive)
    return fail(errc::kConflict, "output share " + share->id + " is " + share->status +
                                     ": only a pending share can be approved");
  return share;
}

Result<OutputShare> OutputShareStore::revoke(std::string_view id, std::string_view actor) {
  TAKOSUMI_TRY(db_.run("UPDATE output_shares SET status = 'revoked', revoked_by = ?,"
                       " revoked_at = ? WHERE id = ? AND status != 'revoked'",
                       actor, clock_.now_unix(), id));
  return get(id);
}

}  // namespace takosumi::controlplane
