#pragma once
// Who calls the public API, as its route's authenticator found from the bearer token: the
// bootstrap token of the configuration (the admin: every Workspace, tokens of any scope, agent
// administration) or a scoped API token (a role per Workspace). Handlers read it from the
// request; a request without one is nobody, who may do nothing.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "controlplane/http/http_types.hpp"
#include "controlplane/store/model/model.hpp"

namespace takosumi::controlplane {

struct Principal {
  std::string actor;                    // what audit records name: "admin" or "token:<id>"
  std::optional<std::string> token_id;  // a scoped token's id
  bool admin = false;
  std::map<std::string, Role> roles;  // Workspace id → role, for a scoped token
  std::optional<std::int64_t> expires_at;  // a scoped token's; what it creates expires no later

  // True when the principal holds `need` (or a role including it) in the Workspace.
  bool has(Role need, std::string_view workspace_id) const;
};

// The principal the router's authenticator put on the request; nobody when there is none.
const Principal& principal_of(const HttpRequest& req);

// forbidden, naming the role the principal lacks and the object it asked for (`what`, e.g.
// "capsule cap_…"), when it does not hold `need` in the Workspace. The same answer whether the
// object exists in another Workspace or not at all: a token cannot probe for ids.
Status require_role(const Principal& p, Role need, std::string_view workspace_id,
                    std::string_view what);
// forbidden unless the principal is the admin (the bootstrap token).
Status require_admin(const Principal& p, std::string_view what);

}  // namespace takosumi::controlplane
