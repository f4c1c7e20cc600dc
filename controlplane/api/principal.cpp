#include "controlplane/api/principal.hpp"

#include <any>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {

bool Principal::has(Role need, std::string_view workspace_id) const {
  if (admin) return true;
  auto it = roles.find(std::string(workspace_id));
  return it != roles.end() && it->second >= need;
}

const Principal& principal_of(const HttpRequest& req) {
  static const Principal nobody{.actor = "nobody"};
  const auto* p = std::any_cast<Principal>(&req.caller);
  return p ? *p : nobody;
}

Status require_role(const Principal& p, Role need, std::string_view workspace_id,
                    std::string_view what) {
  if (p.has(need, workspace_id)) return {};
  const std::string where = what.starts_with("workspace ")
                                ? std::string(what)
                                : "the Workspace of " + std::string(what);
  return fail(errc::kForbidden,
              "this API token lacks the " + std::string(to_string(need)) + " role in " + where +
                  "; an owner of that Workspace or the admin can create a token with it "
                  "(POST /api/v1/tokens)");
}

Status require_admin(const Principal& p, std::string_view what) {
  if (p.admin) return {};
  return fail(errc::kForbidden, std::string(what) +
                                    " needs the admin role: it takes the admin token (the apiToken "
                                    "of the control plane's configuration); a scoped API token "
                                    "cannot");
}

}  // namespace takosumi::controlplane
