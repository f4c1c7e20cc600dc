#pragma once
// Who may call which public route (docs/security.md, "Who may call the API"). Every route
// names the role it needs and where its Workspace comes from; the check runs on the request head,
// before the body is read: the bearer token is the bootstrap admin token (constant-time
// comparison) or a scoped API token, and a scoped token must hold the role in the Workspace the
// route's path (or ?workspaceId=) names. An id that does not exist is refused as one in another
// Workspace is (403 forbidden), so a token cannot probe for ids. Routes whose Workspace is in
// the body (or whose object has two sides, an OutputShare) check in their handler.
#include <any>
#include <cstdint>
#include <map>
#include <string>

#include "common/secret_bytes.hpp"
#include "controlplane/api/principal.hpp"
#include "controlplane/http/router.hpp"
#include "controlplane/store/stores.hpp"

namespace takosumi::controlplane {

enum class Scope {
  workspace,        // the path's id is a Workspace
  capsule,          // … a Capsule
  run,              // … a Run
  state_version,    // … a StateVersion
  connection,       // … a Connection
  dependency,       // … a Dependency (the consumer's Workspace)
  workspace_plan,   // … a workspace plan
  backup,           // … a backup
  workspace_query,  // ?workspaceId=
  handler,          // any valid token; the handler checks (principal_of, require_role)
  admin,            // the bootstrap token only
};

struct Need {
  Role role;
  Scope scope;
};

class PublicAccess {
 public:
  PublicAccess(const Stores& stores, const SecretBytes& admin_token)
      : stores_(stores), admin_token_(admin_token) {}

  // unauthorized without a valid token; the principal otherwise.
  Result<Principal> authenticate(const HttpRequest& head) const;
  // The principal, or forbidden when it lacks what the route needs.
  Result<std::any> admit(const HttpRequest& head, const RouteParams& params, Need need) const;

 private:
  // The Workspace the id of `scope` belongs to, with what a refusal names.
  Result<std::string> workspace_of(Scope scope, const std::string& id) const;
  // Audits a scoped token's refused request (token.refused) and returns the refusal.
  std::unexpected<Error> refused(const Principal& principal, const HttpRequest& head,
                                 const std::string& what, Error why) const;

  static constexpr std::int64_t kRefusalAuditSeconds = 60;
  Stores stores_;
  // token id → when its last refusal was audited (the io thread's only; see refused()).
  mutable std::map<std::string, std::int64_t> last_refusal_audit_;
  const SecretBytes& admin_token_;
};

// What resource classes register their routes with: the access of a route by its need and body.
class PublicRouteAccess {
 public:
  explicit PublicRouteAccess(const PublicAccess& access) : access_(access) {}
  RouteAccess none(Need need) const { return route(need, RouteBody::none); }
  RouteAccess json_body(Need need) const { return route(need, RouteBody::json); }
  RouteAccess file_body(Need need) const { return route(need, RouteBody::file); }

 private:
  RouteAccess route(Need need, RouteBody body) const;
  const PublicAccess& access_;
};

}  // namespace takosumi::controlplane
