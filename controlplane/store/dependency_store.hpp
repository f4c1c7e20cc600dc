#pragma once
// A Workspace's Dependencies (docs/passing-values.md): which Capsule consumes which public
// Outputs of which other Capsule of the same Workspace. The graph they form never has a cycle:
// create() refuses the edge that would close one (409 dependency_cycle, naming it).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

class DependencyStore {
 public:
  DependencyStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // consumer and producer are Capsules of one Workspace, or joined by the active OutputShare
  // given (the caller checked), the mappings checked against the producer's public Outputs.
  // conflict when consumer already depends on producer; dependency_cycle when producer depends
  // on consumer, directly or through others (across Workspaces too).
  Result<Dependency> create(const Capsule& consumer, const Capsule& producer,
                            std::map<std::string, protocol::OutputMapping> outputs,
                            std::optional<std::string> output_share_id = std::nullopt);
  Result<Dependency> get(std::string_view id);
  // Oldest first.
  Result<std::vector<Dependency>> as_consumer(std::string_view capsule_id);
  Result<std::vector<Dependency>> as_producer(std::string_view capsule_id);
  // Every Dependency whose consumer is in the Workspace (through shares too), oldest first.
  Result<std::vector<Dependency>> in_workspace(std::string_view workspace_id);
  Status remove(std::string_view id);

 private:
  // The chain producer → … → consumer through existing Dependencies, when there is one.
  Result<std::vector<std::string>> path_to(std::string_view from, std::string_view to);

  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
