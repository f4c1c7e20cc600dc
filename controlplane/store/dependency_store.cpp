#include "controlplane/store/dependency_store.hpp"

#include <deque>
#include <set>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

constexpr std::string_view kSelect =
    "SELECT id, workspace_id, consumer_capsule_id, producer_capsule_id, outputs, created_at,"
    " output_share_id FROM dependencies";

Result<Dependency> dependency_from_row(const Statement& s) {
  Dependency d;
  std::string outputs_text;
  ColumnReader(s) >> d.id >> d.workspace_id >> d.consumer_capsule_id >> d.producer_capsule_id >>
      outputs_text >> d.created_at >> d.output_share_id;
  auto outputs = parse_object(outputs_text, 1 << 20);
  if (!outputs) return fail(errc::kInternal, "dependency " + d.id + ": stored outputs are corrupt");
  for (const auto& kv : *outputs) {
    const auto* m = kv.value().if_object();
    const auto* from = m ? m->if_contains("from") : nullptr;
    const auto* type = m ? m->if_contains("type") : nullptr;
    const auto* required = m ? m->if_contains("required") : nullptr;
    if (!from || !from->is_string() || !type || !type->is_string() || !required ||
        !required->is_bool())
      return fail(errc::kInternal, "dependency " + d.id + ": stored outputs are corrupt");
    d.outputs.emplace(std::string(kv.key()), protocol::OutputMapping{std::string(from->get_string()),
                                                                     std::string(type->get_string()),
                                                                     required->get_bool()});
  }
  return d;
}

}  // namespace

Result<std::vector<std::string>> DependencyStore::path_to(std::string_view from,
                                                          std::string_view to) {
  // Breadth first over consumer → producer edges; `came_from` keeps one way back to `from`.
  std::map<std::string, std::string> came_from{{std::string(from), ""}};
  std::deque<std::string> next{std::string(from)};
  while (!next.empty()) {
    const std::string at = next.front();
    next.pop_front();
    if (at == to) {
      std::vector<std::string> path{at};
      for (std::string step = came_from[at]; !step.empty(); step = came_from[step])
        path.insert(path.begin(), step);
      return path;
    }
    auto producers = collect(
        db_.query("SELECT producer_capsule_id FROM dependencies WHERE consumer_capsule_id = ?", at),
        [](const Statement& row) { return row.text(0); });
    if (!producers) return std::unexpected(producers.error());
    for (auto& p : *producers)
      if (came_from.emplace(p, at).second) next.push_back(std::move(p));
  }
  return std::vector<std::string>{};
}

Result<Dependency> DependencyStore::create(const Capsule& consumer, const Capsule& producer,
                                           std::map<std::string, protocol::OutputMapping> outputs,
                                           std::optional<std::string> output_share_id) {
  return in_transaction(db_, [&]() -> Result<Dependency> {
    // The new edge is consumer → producer: a way back from producer to consumer closes a cycle.
    auto back = path_to(producer.id, consumer.id);
    if (!back) return std::unexpected(back.error());
    if (!back->empty()) {
      std::string cycle = consumer.id;
      for (const auto& id : *back) cycle += " -> " + id;
      return fail(errc::kDependencyCycle,
                  "capsule " + consumer.id + " cannot depend on " + producer.id +
                      ": that closes the cycle " + cycle);
    }
    Dependency d{crypto::new_id("dep"), consumer.workspace_id, consumer.id, producer.id,
                 std::move(outputs), clock_.now_unix(), std::move(output_share_id)};
    auto inserted = db_.run(
        "INSERT INTO dependencies (id, workspace_id, consumer_capsule_id, producer_capsule_id,"
        " outputs, created_at, output_share_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        d.id, d.workspace_id, d.consumer_capsule_id, d.producer_capsule_id,
        takosumi::serialize(protocol::to_json(d.outputs)), d.created_at, d.output_share_id);
    if (!inserted && inserted.error().code == errc::kConflict)
      return fail(errc::kConflict, "capsule " + consumer.id + " already depends on " +
                                       producer.id + "; delete that Dependency to replace it");
    if (!inserted) return std::unexpected(inserted.error());
    return d;
  });
}

Result<Dependency> DependencyStore::get(std::string_view id) {
  return one_row(db_.query(std::string(kSelect) + " WHERE id = ?", id),
                 "dependency " + std::string(id), dependency_from_row);
}

Result<std::vector<Dependency>> DependencyStore::as_consumer(std::string_view capsule_id) {
  return collect(db_.query(std::string(kSelect) +
                               " WHERE consumer_capsule_id = ? ORDER BY created_at, rowid",
                           capsule_id),
                 dependency_from_row);
}

Result<std::vector<Dependency>> DependencyStore::in_workspace(std::string_view workspace_id) {
  return collect(db_.query(std::string(kSelect) + " WHERE workspace_id = ? ORDER BY created_at, rowid",
                           workspace_id),
                 dependency_from_row);
}

Result<std::vector<Dependency>> DependencyStore::as_producer(std::string_view capsule_id) {
  return collect(db_.query(std::string(kSelect) +
                               " WHERE producer_capsule_id = ? ORDER BY created_at, rowid",
                           capsule_id),
                 dependency_from_row);
}

Status DependencyStore::remove(std::string_view id) {
  TAKOSUMI_TRY(db_.run("DELETE FROM dependencies WHERE id = ?", id));
  if (db_.changes() == 0)
    return fail(errc::kNotFound, "dependency " + std::string(id) + " not found");
  return {};
}

}  // namespace takosumi::controlplane
