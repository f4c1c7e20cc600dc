#pragma once
// Scoped API tokens (docs/security.md, "Who may call the API"): a token's secret is shown
// once, when it is created, and only its SHA-256 is kept, so a copy of the database authenticates
// no one. Errors: not_found for unknown ids.
#include <cstdint>
#include <map>
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

struct NewApiToken {
  std::string name;
  std::map<std::string, Role> roles;  // the Workspaces exist (the caller checked)
  std::optional<std::int64_t> expires_at;
};

struct CreatedApiToken {
  ApiToken token;
  SecretBytes secret;  // "tkn_" + 64 hex; returned to its creator once, never stored
};

class ApiTokenStore {
 public:
  ApiTokenStore(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  Result<CreatedApiToken> create(NewApiToken spec, std::string_view created_by);
  Result<ApiToken> get(std::string_view id);
  // The token whose secret this is, if it is neither revoked nor expired; records its use
  // (last_used_at, at most once a minute).
  Result<std::optional<ApiToken>> authenticate(std::string_view secret);
  // Oldest first, revoked and expired ones included.
  Result<std::vector<ApiToken>> list();
  // Sets revoked_at (the first time only).
  Result<ApiToken> revoke(std::string_view id);

 private:
  Result<ApiToken> with_roles(ApiToken token);

  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
