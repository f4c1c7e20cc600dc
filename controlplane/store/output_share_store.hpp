#pragma once
// OutputShares (docs/passing-values.md): named public Outputs of a Capsule offered to another
// Workspace. A share moves pending → active (approved by the receiving side) → revoked, or
// pending → revoked; nothing moves it back. Errors: not_found for unknown ids, conflict for a
// move its status does not allow.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

class OutputShareStore {
 public:
  OutputShareStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // The producer exists and the outputs are public (the caller checked); the receiving Workspace
  // may not exist (such an offer is never approved).
  Result<OutputShare> create(const Capsule& producer, std::string_view to_workspace_id,
                             std::vector<std::string> outputs, std::string_view actor);
  Result<OutputShare> get(std::string_view id);
  // Given and received by the Workspace, oldest first.
  Result<std::vector<OutputShare>> list(std::string_view workspace_id);
  Result<OutputShare> approve(std::string_view id, std::string_view actor);
  Result<OutputShare> revoke(std::string_view id, std::string_view actor);
  // Offers the Workspace gave that still wait for approval.
  Result<std::int64_t> count_pending_from(std::string_view workspace_id);

 private:
  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
