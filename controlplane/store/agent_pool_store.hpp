#pragma once
// Agent pools (model.hpp AgentPool; docs/operations.md "Agent pools") and the labels that route a
// Capsule's Runs to agents. "default" always exists (schema v13); pools are made by the admin and
// never deleted, so a Capsule or pool token naming one never dangles.
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"
#include "controlplane/store/model/model.hpp"

namespace takosumi::controlplane {

// ^[A-Za-z0-9][A-Za-z0-9._:=/-]{0,127}$ — a label a Capsule may require (agents' own labels are
// free text; one outside this form is simply never required).
bool is_valid_agent_label(std::string_view label);
// A JSON array of labels as a sorted, unique list; invalid_argument naming `field` otherwise.
Result<std::vector<std::string>> agent_labels_from_json(const boost::json::value& v,
                                                        std::string_view field);
// Stored form: a JSON array. Reading tolerates anything (a damaged cell reads as no labels).
std::string agent_labels_text(const std::vector<std::string>& labels);
std::vector<std::string> agent_labels_from_text(std::string_view text);
// ",a,b,": the labels of `offered` that a Capsule could require (is_valid_agent_label: none holds
// a comma), as the claim matches them (instr(offered, ',' || required || ',') > 0).
std::string agent_label_list(const std::vector<std::string>& offered);
// A pool's Workspaces: ids as this control plane makes them (is_plausible_id), sorted and unique,
// or {"*"} alone for every Workspace; invalid_argument naming the entry otherwise.
Result<std::vector<std::string>> pool_workspaces_from_json(const boost::json::value& v);

// What GET /api/v1/agent-pools says of a pool beside its definition: what an autoscaler reads.
struct AgentPoolLoad {
  std::int64_t queued = 0;            // Runs of its Capsules an agent could take now
  std::int64_t agents = 0;            // registered, neither revoked nor deregistered
  std::int64_t connected_agents = 0;  // of those, the ones that called in the last two minutes
  std::int64_t capacity = 0;          // their slots
  std::int64_t busy_slots = 0;
};

class AgentPoolStore {
 public:
  AgentPoolStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // conflict when the name is taken; the caller validated the name, the labels and the
  // Workspaces (existing ids, or {"*"}).
  Result<AgentPool> create(AgentPool pool);
  Result<std::vector<AgentPool>> list();
  // not_found naming how to make it.
  Result<AgentPool> get(std::string_view name);
  // Replaces the Workspaces that may use the pool; not_found for an unknown pool, invalid_argument
  // for "default" (always every Workspace's).
  Result<AgentPool> set_workspaces(std::string_view name, std::vector<std::string> workspaces);
  // Whether the pool exists and the Workspace may use it. One answer for both, so a Workspace's
  // owner cannot learn which pools exist beyond those granted to it.
  Result<bool> usable_by(std::string_view name, std::string_view workspace_id);
  Result<AgentPoolLoad> load(std::string_view name);

 private:
  // The pool's Workspaces as its rows; each named one must exist.
  Status write_workspaces(const AgentPool& pool);
  Result<AgentPool> with_workspaces(AgentPool pool);

  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
