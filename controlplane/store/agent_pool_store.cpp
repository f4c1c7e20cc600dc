#include "controlplane/store/agent_pool_store.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "controlplane/store/agent_registry.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "controlplane/store/run_store.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::size_t kMaxLabels = 32;
constexpr std::string_view kSelect =
    "SELECT name, labels, created_by, created_at, offline FROM agent_pools";

bool is_label_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '=' || c == '/' || c == '-';
}

AgentPool pool_from_row(const Statement& s) {
  AgentPool p;
  std::string labels;
  ColumnReader(s) >> p.name >> labels >> p.created_by >> p.created_at >> p.offline;
  p.labels = agent_labels_from_text(labels);
  return p;
}

}  // namespace

bool is_valid_agent_label(std::string_view label) {
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (label.empty() || label.size() > 128 || !alnum(label.front())) return false;
  return std::ranges::all_of(label, is_label_char);
}

Result<std::vector<std::string>> agent_labels_from_json(const boost::json::value& v,
                                                        std::string_view field) {
  const std::string name(field);
  if (!v.is_array()) return fail(errc::kInvalidArgument, name + " must be an array of labels");
  const auto& a = v.as_array();
  if (a.size() > kMaxLabels)
    return fail(errc::kInvalidArgument,
                name + " has " + std::to_string(a.size()) + " labels; at most " +
                    std::to_string(kMaxLabels) + " are allowed");
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = name + "[" + std::to_string(i) + "]";
    if (!a[i].is_string()) return fail(errc::kInvalidArgument, at + " must be a string");
    std::string label(a[i].as_string());
    if (!is_valid_agent_label(label))
      return fail(errc::kInvalidArgument,
                  at + " must match ^[A-Za-z0-9][A-Za-z0-9._:=/-]{0,127}$");
    labels.push_back(std::move(label));
  }
  std::ranges::sort(labels);
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  return labels;
}

std::string agent_labels_text(const std::vector<std::string>& labels) {
  boost::json::array out;
  for (const auto& l : labels) out.emplace_back(l);
  return takosumi::serialize(out);
}

std::vector<std::string> agent_labels_from_text(std::string_view text) {
  std::vector<std::string> labels;
  boost::system::error_code ec;
  const auto parsed = boost::json::parse(text, ec);
  if (!ec && parsed.is_array())
    for (const auto& l : parsed.as_array())
      if (l.is_string()) labels.emplace_back(l.as_string());
  return labels;
}

std::string agent_label_list(const std::vector<std::string>& offered) {
  std::string out = ",";
  for (const auto& label : offered)
    if (is_valid_agent_label(label)) out += label + ",";
  return out;
}

Result<std::vector<std::string>> pool_workspaces_from_json(const boost::json::value& v) {
  if (!v.is_array() || v.as_array().empty())
    return fail(errc::kInvalidArgument,
                "workspaces must list the ids of the Workspaces whose Capsules may use the pool, "
                "or be [\"*\"] for every Workspace");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.as_array().size(); ++i) {
    const auto& w = v.as_array()[i];
    const std::string at = "workspaces[" + std::to_string(i) + "]";
    if (!w.is_string()) return fail(errc::kInvalidArgument, at + " must be a string");
    std::string id(w.as_string());
    if (id != "*" && !is_plausible_id(id))
      return fail(errc::kInvalidArgument, at + " must be a Workspace id or \"*\"");
    out.push_back(std::move(id));
  }
  std::ranges::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > 1 && std::ranges::find(out, "*") != out.end())
    return fail(errc::kInvalidArgument, "workspaces: \"*\" stands alone (every Workspace)");
  return out;
}

Status AgentPoolStore::write_workspaces(const AgentPool& pool) {
  TAKOSUMI_TRY(db_.run("DELETE FROM agent_pool_workspaces WHERE pool = ?", pool.name));
  for (const auto& w : pool.workspaces) {
    if (w != "*") {
      auto exists = db_.single_integer("SELECT count(*) FROM workspaces WHERE id = ?", w);
      if (!exists) return std::unexpected(exists.error());
      if (*exists == 0)
        return fail(errc::kInvalidArgument, "workspaces: no Workspace " + w);
    }
    TAKOSUMI_TRY(db_.run("INSERT INTO agent_pool_workspaces (pool, workspace_id) VALUES (?, ?)",
                         pool.name, w));
  }
  return {};
}

Result<AgentPool> AgentPoolStore::create(AgentPool pool) {
  pool.created_at = clock_.now_unix();
  return in_transaction(db_, [&]() -> Result<AgentPool> {
    auto made = db_.run("INSERT INTO agent_pools (name, labels, created_by, created_at, offline)"
                        " VALUES (?, ?, ?, ?, ?)",
                        pool.name, agent_labels_text(pool.labels), pool.created_by,
                        pool.created_at, pool.offline);
    if (!made && made.error().code == errc::kConflict)
      return fail(errc::kConflict, "agent pool \"" + pool.name + "\" already exists");
    if (!made) return std::unexpected(made.error());
    TAKOSUMI_TRY(write_workspaces(pool));
    return pool;
  });
}

Result<AgentPool> AgentPoolStore::with_workspaces(AgentPool pool) {
  auto workspaces = collect(db_.query("SELECT workspace_id FROM agent_pool_workspaces WHERE"
                                      " pool = ? ORDER BY workspace_id",
                                      pool.name),
                            [](const Statement& s) { return s.text(0); });
  if (!workspaces) return std::unexpected(workspaces.error());
  pool.workspaces = std::move(*workspaces);
  return pool;
}

Result<std::vector<AgentPool>> AgentPoolStore::list() {
  auto pools = collect(db_.query(std::string(kSelect) + " ORDER BY name"), pool_from_row);
  if (!pools) return pools;
  for (auto& pool : *pools) {
    auto full = with_workspaces(std::move(pool));
    if (!full) return std::unexpected(full.error());
    pool = std::move(*full);
  }
  return pools;
}

Result<AgentPool> AgentPoolStore::get(std::string_view name) {
  auto pool = one_row(db_.query(std::string(kSelect) + " WHERE name = ?", name),
                      "agent pool", pool_from_row);
  if (!pool && pool.error().code == errc::kNotFound)
    return fail(errc::kNotFound, "agent pool \"" + std::string(name) +
                                     "\" does not exist; an admin makes it with POST "
                                     "/api/v1/agent-pools");
  if (!pool) return pool;
  return with_workspaces(std::move(*pool));
}

Result<AgentPool> AgentPoolStore::set_workspaces(std::string_view name,
                                                 std::vector<std::string> workspaces) {
  if (name == kDefaultPool)
    return fail(errc::kInvalidArgument,
                "the pool \"default\" is every Workspace's; make a pool of your own to set some "
                "apart");
  return in_transaction(db_, [&]() -> Result<AgentPool> {
    auto pool = get(name);
    if (!pool) return pool;
    pool->workspaces = std::move(workspaces);
    TAKOSUMI_TRY(write_workspaces(*pool));
    return pool;
  });
}

Result<bool> AgentPoolStore::usable_by(std::string_view name, std::string_view workspace_id) {
  auto n = db_.single_integer("SELECT count(*) FROM agent_pool_workspaces WHERE pool = ? AND"
                              " (workspace_id = '*' OR workspace_id = ?)",
                              name, workspace_id);
  if (!n) return std::unexpected(n.error());
  return *n > 0;
}

Result<AgentPoolLoad> AgentPoolStore::load(std::string_view name) {
  const std::int64_t now = clock_.now_unix();
  AgentPoolLoad load;
  auto queued = db_.single_integer("SELECT count(*) FROM runs r JOIN capsules c ON c.id ="
                                   " r.capsule_id WHERE c.agent_pool = ?2 AND" +
                                       std::string(kWaitingForAgent) + " AND" +
                                       std::string(kCapsuleFree) + " AND" +
                                       std::string(kPoolUsable),
                                   now, name);
  if (!queued) return std::unexpected(queued.error());
  load.queued = *queued;
  auto s = db_.query(
      "SELECT count(*), CAST(coalesce(sum(CASE WHEN last_seen_at >= ? THEN 1 ELSE 0 END), 0)"
      " AS BIGINT), CAST(coalesce(sum(capacity), 0) AS BIGINT),"
      " CAST(coalesce(sum(coalesce(busy_slots, 0)), 0) AS BIGINT) FROM agents"
      " WHERE pool = ? AND revoked_at IS NULL AND deregistered_at IS NULL",
      now - kAgentConnectedSeconds, name);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (*row) ColumnReader(*s) >> load.agents >> load.connected_agents >> load.capacity >> load.busy_slots;
  return load;
}

}  // namespace takosumi::controlplane
