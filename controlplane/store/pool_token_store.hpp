#pragma once
// Pool tokens made through the API (model.hpp PoolToken). The secret ("pool_" + 64 hex) is shown
// once; a copy of the database admits no agent.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

// An unrevoked pool token found by its secret: which one, and the pool it admits agents to.
struct ActivePoolToken {
  std::string id;
  std::string pool;
};

struct CreatedPoolToken {
  PoolToken token;
  SecretBytes secret;
};

class PoolTokenStore {
 public:
  PoolTokenStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // `pool` exists (the caller checked, in the same transaction).
  Result<CreatedPoolToken> create(std::string name, std::string pool, std::string_view created_by);
  // The unrevoked token with this secret, if any.
  Result<std::optional<ActivePoolToken>> find_active(std::string_view secret);
  // Oldest first, revoked ones included.
  Result<std::vector<PoolToken>> list();
  // Sets revoked_at the first time; not_found for an unknown id.
  Result<PoolToken> revoke(std::string_view id);

 private:
  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
