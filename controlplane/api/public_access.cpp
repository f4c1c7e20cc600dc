#include "controlplane/api/public_access.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <chrono>

#include "common/error_codes.hpp"
#include "controlplane/store/audit_log.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

std::string_view noun(Scope scope) {
  switch (scope) {
    case Scope::workspace: return "workspace";
    case Scope::capsule: return "capsule";
    case Scope::run: return "run";
    case Scope::state_version: return "state version";
    case Scope::connection: return "connection";
    case Scope::dependency: return "dependency";
    case Scope::workspace_plan: return "workspace plan";
    case Scope::backup: return "backup";
    case Scope::workspace_query: return "workspace";
    case Scope::handler: break;
    case Scope::admin: break;
  }
  return "resource";
}

}  // namespace

Result<Principal> PublicAccess::authenticate(const HttpRequest& head) const {
  auto token = head.bearer_token();
  if (!token) return fail(errc::kUnauthorized, "missing API token (Authorization: Bearer …)");
  if (crypto::secrets_equal(*token, admin_token_.reveal_as_string()))
    return Principal{.actor = std::string(kAdminActor), .admin = true};
  auto scoped = stores_.tokens.authenticate(*token);
  if (!scoped) return std::unexpected(scoped.error());
  if (!*scoped)
    return fail(errc::kUnauthorized,
                "wrong, revoked or expired API token (Authorization: Bearer …)");
  return Principal{.actor = "token:" + (*scoped)->id, .token_id = (*scoped)->id,
                   .roles = std::move((*scoped)->roles), .expires_at = (*scoped)->expires_at};
}

Result<std::string> PublicAccess::workspace_of(Scope scope, const std::string& id) const {
  switch (scope) {
    case Scope::workspace:
    case Scope::workspace_query: {
      auto w = stores_.catalog.get_workspace(id);
      if (!w) return std::unexpected(w.error());
      return w->id;
    }
    case Scope::capsule: {
      auto c = stores_.catalog.get_capsule(id);
      if (!c) return std::unexpected(c.error());
      return c->workspace_id;
    }
    case Scope::run: {
      auto r = stores_.runs.get_run(id);
      if (!r) return std::unexpected(r.error());
      return workspace_of(Scope::capsule, r->capsule_id);
    }
    case Scope::state_version: {
      auto sv = stores_.states.get(id);
      if (!sv) return std::unexpected(sv.error());
      return workspace_of(Scope::capsule, sv->capsule_id);
    }
    case Scope::connection: {
      auto c = stores_.connections.get(id);
      if (!c) return std::unexpected(c.error());
      return c->workspace_id;
    }
    case Scope::dependency: {
      auto d = stores_.dependencies.get(id);
      if (!d) return std::unexpected(d.error());
      return d->workspace_id;
    }
    case Scope::workspace_plan: {
      auto p = stores_.workspace_plans.get(id);
      if (!p) return std::unexpected(p.error());
      return p->workspace_id;
    }
    case Scope::backup: {
      auto b = stores_.backups.get(id);
      if (!b) return std::unexpected(b.error());
      return b->workspace_id;
    }
    case Scope::handler:
    case Scope::admin: break;
  }
  return fail(errc::kInternal, "no Workspace for this route");
}

Result<std::any> PublicAccess::admit(const HttpRequest& head, const RouteParams& params,
                                     Need need) const {
  auto principal = authenticate(head);
  if (!principal) return std::unexpected(principal.error());
  // The admin passes every check here; handlers still answer not_found for unknown ids.
  if (principal->admin || need.scope == Scope::handler) return std::any{std::move(*principal)};
  if (need.scope == Scope::admin) {
    auto admitted = require_admin(*principal, "this endpoint");
    if (!admitted) return refused(*principal, head, "an admin endpoint", admitted.error());
    return std::any{std::move(*principal)};
  }
  std::string id;
  if (need.scope == Scope::workspace_query) {
    auto it = head.query.find("workspaceId");
    // Missing: the handler refuses the request (400) before it reads anything.
    if (it == head.query.end() || it->second.empty()) return std::any{std::move(*principal)};
    id = it->second;
  } else {
    if (params.empty()) return fail(errc::kInternal, "route without the id its access needs");
    id = params.front();
  }
  const std::string what = std::string(noun(need.scope)) + " " + id;
  auto workspace_id = workspace_of(need.scope, id);
  // Not found is refused exactly as another Workspace's object is.
  if (!workspace_id && workspace_id.error().code != errc::kNotFound)
    return std::unexpected(workspace_id.error());
  auto admitted = require_role(*principal, need.role, workspace_id ? *workspace_id : "", what);
  if (!admitted) return refused(*principal, head, what, admitted.error());
  return std::any{std::move(*principal)};
}

// A scoped token's refused request is audited by the token's id, in each Workspace the token holds
// a role in, so the owners who made it see what it tried; never in the Workspace it reached for,
// whose existence its holder would then learn from its own activity. At most once a minute per
// token (a token may hold 256 roles, and audit records stay): the first refusal of each minute
// stands for the rest. What is recorded is the method, the kind of object and its id as far as
// it is an id (attacker-chosen text is cut to id characters): never the path itself or the
// secret. The refusal stands whether or not the record could be written.
std::unexpected<Error> PublicAccess::refused(const Principal& principal, const HttpRequest& head,
                                            const std::string& what, Error why) const {
  const std::string token_id = principal.token_id.value_or("");
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  auto& last = last_refusal_audit_[token_id];
  if (last != 0 && now - last < kRefusalAuditSeconds) return std::unexpected(std::move(why));
  last = now;
  if (last_refusal_audit_.size() > 4096)  // tokens quiet for a minute are forgotten
    std::erase_if(last_refusal_audit_,
                  [&](const auto& kv) { return now - kv.second >= kRefusalAuditSeconds; });
  std::string target;
  for (const char c : what.substr(0, 160))
    target += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ' ')
                  ? c : '?';
  auto recorded = in_transaction(stores_.db, [&]() -> Status {
    for (const auto& [workspace_id, role] : principal.roles) {
      AuditEvent e{.actor = principal.actor, .action = "token.refused", .workspace_id = workspace_id};
      e.detail = {{"tokenId", token_id}, {"method", std::string(head.method)}, {"target", target}};
      TAKOSUMI_TRY(stores_.audit.record(std::move(e)));
    }
    return {};
  });
  if (!recorded)
    spdlog::warn("token {}: refusal not audited: {}", token_id, recorded.error().to_string());
  return std::unexpected(std::move(why));
}

RouteAccess PublicRouteAccess::route(Need need, RouteBody body) const {
  const PublicAccess& access = access_;
  return RouteAccess{[&access, need](const HttpRequest& head, const RouteParams& params) {
                       return access.admit(head, params, need);
                     },
                     body};
}

}  // namespace takosumi::controlplane
