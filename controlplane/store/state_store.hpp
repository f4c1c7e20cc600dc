#pragma once
// StateVersions (append-only, one generation sequence per Capsule) and each Capsule's public
// Outputs. Holds descriptors and ciphertext digests only; the encrypted blobs live in BlobStore.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"
#include "common/json_fields.hpp"

namespace takosumi::controlplane {

struct CapsuleOutputs {
  std::optional<std::string> state_version_id;
  std::int64_t generation = 0;
  boost::json::object outputs;
};

class StateStore {
 public:
  StateStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // The newest StateVersion of the Capsule, if any.
  Result<std::optional<StateVersion>> current(std::string_view capsule_id);
  Result<StateVersion> get(std::string_view id);
  // Newest first; only generations below `before` when given.
  Result<std::vector<StateVersion>> list(std::string_view capsule_id, int limit,
                                         std::optional<std::int64_t> before);
  // Appends generation = current + 1 (restored_from and partial as given); conflict when another
  // version took that generation. Nothing ever rewrites or removes a StateVersion.
  Result<StateVersion> append(StateVersion sv);
  // A StateVersion of another control plane (a state transfer) with its id and generation, which
  // must be the next here; conflict otherwise.
  Status import(const StateVersion& sv);

  Result<CapsuleOutputs> outputs(std::string_view capsule_id);
  Status set_outputs(std::string_view capsule_id, std::string_view run_id,
                     const std::optional<StateVersion>& version, const boost::json::object& values);

 private:
  Status insert(const StateVersion& sv);

  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
