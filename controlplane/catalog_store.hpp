#pragma once
// Workspaces and Capsules in SQLite. Errors: not_found for unknown ids, conflict for a duplicate
// name (Workspace names are global, Capsule names unique within their Workspace).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/capsule_spec.hpp"
#include "controlplane/model.hpp"
#include "controlplane/sqlite_db.hpp"

namespace takosumi::controlplane {

class CatalogStore {
 public:
  CatalogStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  Result<Workspace> create_workspace(const std::string& name);
  Result<Workspace> get_workspace(std::string_view id);
  Result<std::vector<Workspace>> list_workspaces();

  Result<Capsule> create_capsule(std::string_view workspace_id, const CapsuleRequest& req);
  Result<Capsule> get_capsule(std::string_view id);
  Result<std::vector<Capsule>> list_capsules(std::string_view workspace_id);
  // Marks the Capsule destroyed at `at` (a destroy's apply succeeded) or not (nullopt).
  Status set_destroyed(std::string_view capsule_id, std::optional<std::int64_t> at);

 private:
  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
