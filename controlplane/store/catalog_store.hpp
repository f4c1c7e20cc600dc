#pragma once
// Workspaces and Capsules in SQLite. Errors: not_found for unknown ids, conflict for a duplicate
// name (Workspace names are global, Capsule names unique within their Workspace).
// A Capsule's Connection assignment and sensitive variables are stored as given: the caller checks
// the assignment rules (connection_spec.hpp) and seals the values (secret_storage.hpp) first.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

// What a Capsule keeps of its secrets: Connection ids in order, and its sensitive variables'
// names beside their sealed values (nullopt when it has none).
struct CapsuleSecretsRecord {
  std::vector<std::string> connection_ids;
  std::vector<std::string> sensitive_variable_names;
  std::optional<std::string> sealed_sensitive_variables;
};

// The Capsule as a Run of `revision` runs it: the revision's name, source, Outputs and variables,
// with the source's Connection as capsule_as_of's comment says; the rest as the Capsule is now.
Capsule capsule_as_of(const Capsule& current, const CapsuleRevision& revision);

class CatalogStore {
 public:
  CatalogStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  Result<Workspace> create_workspace(const std::string& name);
  Result<Workspace> get_workspace(std::string_view id);
  Result<std::vector<Workspace>> list_workspaces();

  Result<Capsule> create_capsule(std::string_view workspace_id, const CapsuleRequest& req,
                                 const CapsuleSecretsRecord& secrets = {});
  Result<Capsule> get_capsule(std::string_view id);
  // A Workspace and a Capsule as a backup recorded them (ids kept), a Capsule without Connections
  // or sensitive variables. conflict when the id is taken.
  Result<Workspace> restore_workspace(const Workspace& ws);
  Status restore_capsule(const Capsule& capsule);
  // Sets or ends a restored Capsule's wait for its state (Capsule::state_pending).
  Status set_state_pending(std::string_view capsule_id, bool pending);
  Result<std::vector<Capsule>> list_capsules(std::string_view workspace_id);
  // Marks the Capsule destroyed at `at` (a destroy's apply succeeded) or not (nullopt).
  Status set_destroyed(std::string_view capsule_id, std::optional<std::int64_t> at);
  // Replaces the Capsule's Connection assignment (and ends a restored Capsule's wait for its
  // Connections and sensitive variables; its source's Connection is set on its own).
  Status set_connections(std::string_view capsule_id, const std::vector<std::string>& ids);
  // Sets the Connection of kind git its source is fetched with (nullopt: none; the caller
  // checked it), and ends a restored Capsule's wait for it.
  Status set_source_connection(std::string_view capsule_id, const std::optional<std::string>& connection_id);
  // Replaces the Capsule's sensitive variables (names and sealed values together).
  Status set_sensitive_variables(std::string_view capsule_id, const std::vector<std::string>& names,
                                 const std::optional<std::string>& sealed);
  Result<std::optional<std::string>> sealed_sensitive_variables(std::string_view capsule_id);
  // Replaces the Capsule's Run policy.
  Status set_policy(std::string_view capsule_id, const protocol::RunPolicy& policy);
  // Replaces the Capsule's OpenTofu version constraint (nullopt: none; the caller validated it).
  // Queued Runs follow: the manifest is built when a Run is claimed.
  Status set_opentofu_version(std::string_view capsule_id,
                              const std::optional<std::string>& constraint);
  // The pool exists (the caller checked). Queued Runs follow: a claim reads the Capsule's.
  Status set_agent_requirements(std::string_view capsule_id, const AgentRequirements& requirements);
  // Changes what `change` names (validated by the caller) as the Capsule's next spec revision,
  // kept with the one before it. conflict when the name is taken in the Workspace, or when the
  // Capsule changed since `current` was read. Runs made before keep running their own revision.
  Result<Capsule> change_capsule(const Capsule& current, const CapsuleChange& change);
  // What revision `revision` of the Capsule fixed. A Capsule from before revisions were kept
  // (schema 17) has no record of its revision 1 until its first change: its current spec is it.
  Result<CapsuleRevision> get_revision(std::string_view capsule_id, std::int64_t revision);
  // The kept revisions after revision `after` (0: from the first), the current one included,
  // oldest first, at most `limit` of them.
  Result<std::vector<CapsuleRevision>> list_revisions(std::string_view capsule_id, int limit,
                                                      std::int64_t after = 0);

 private:
  Status write_agent_labels(std::string_view capsule_id, const std::vector<std::string>& labels);
  Status insert_capsule(const Capsule& capsule, const std::optional<std::string>& sealed);
  // Records the Capsule's current spec as its revision, unless it is recorded already.
  Status record_revision(const Capsule& capsule);
  Result<Capsule> with_connections(Result<Capsule> capsule);
  Status insert_connections(std::string_view capsule_id, const std::vector<std::string>& ids);
  // Removes `done` from a restored Capsule's restore_pending; NULL once nothing is left.
  Status settle_restore_pending(std::string_view capsule_id, std::initializer_list<std::string_view> done);

  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
