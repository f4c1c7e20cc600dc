#include "controlplane/store/api_token_store.hpp"

#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kTokenPrefix = "tkn_";
constexpr std::int64_t kLastUsedResolutionSeconds = 60;

constexpr std::string_view kSelect =
    "SELECT id, name, created_by, created_at, expires_at, revoked_at, last_used_at FROM api_tokens";

ApiToken token_from_row(const Statement& s) {
  ApiToken t;
  ColumnReader(s) >> t.id >> t.name >> t.created_by >> t.created_at >> t.expires_at >>
      t.revoked_at >> t.last_used_at;
  return t;
}

}  // namespace

std::string_view to_string(Role role) {
  switch (role) {
    case Role::viewer: return "viewer";
    case Role::operator_: return "operator";
    case Role::owner: return "owner";
  }
  return "viewer";
}

std::optional<Role> role_from_string(std::string_view text) {
  for (Role r : {Role::viewer, Role::operator_, Role::owner})
    if (to_string(r) == text) return r;
  return std::nullopt;
}

Result<ApiToken> ApiTokenStore::with_roles(ApiToken token) {
  auto rows = collect(
      db_.query("SELECT workspace_id, role FROM api_token_roles WHERE token_id = ?", token.id),
      [](const Statement& row) { return std::pair{row.text(0), row.text(1)}; });
  if (!rows) return std::unexpected(rows.error());
  for (const auto& [workspace_id, text] : *rows) {
    auto role = role_from_string(text);
    if (!role) return fail(errc::kInternal, "api token " + token.id + ": stored role is corrupt");
    token.roles.emplace(workspace_id, *role);
  }
  return token;
}

Result<CreatedApiToken> ApiTokenStore::create(NewApiToken spec, std::string_view created_by) {
  CreatedApiToken created{
      ApiToken{.id = crypto::new_id("tok"), .name = std::move(spec.name),
               .roles = std::move(spec.roles), .created_by = std::string(created_by),
               .created_at = clock_.now_unix(), .expires_at = spec.expires_at},
      SecretBytes::from_string(std::string(kTokenPrefix) + crypto::new_token())};
  const ApiToken& t = created.token;
  auto stored = in_transaction(db_, [&]() -> Status {
    TAKOSUMI_TRY(db_.run("INSERT INTO api_tokens (id, name, secret_sha256, created_by, created_at,"
                         " expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                         t.id, t.name, crypto::token_sha256(created.secret.reveal_as_string()),
                         t.created_by, t.created_at, t.expires_at));
    for (const auto& [workspace_id, role] : t.roles)
      TAKOSUMI_TRY(db_.run("INSERT INTO api_token_roles (token_id, workspace_id, role)"
                           " VALUES (?, ?, ?)",
                           t.id, workspace_id, to_string(role)));
    return {};
  });
  if (!stored) return std::unexpected(stored.error());
  return created;
}

Result<ApiToken> ApiTokenStore::get(std::string_view id) {
  auto token = one_row(db_.query(std::string(kSelect) + " WHERE id = ?", id),
                       "api token " + std::string(id), token_from_row);
  if (!token) return token;
  return with_roles(std::move(*token));
}

Result<std::optional<ApiToken>> ApiTokenStore::authenticate(std::string_view secret) {
  // Secrets are 256-bit random: a lookup by their SHA-256 tells a timing observer nothing useful.
  if (!secret.starts_with(kTokenPrefix)) return std::optional<ApiToken>{};
  auto found = collect(db_.query(std::string(kSelect) + " WHERE secret_sha256 = ?",
                                 crypto::token_sha256(secret)),
                       token_from_row);
  if (!found) return std::unexpected(found.error());
  if (found->empty()) return std::optional<ApiToken>{};
  ApiToken& t = found->front();
  const std::int64_t now = clock_.now_unix();
  if (t.revoked_at || (t.expires_at && *t.expires_at <= now)) return std::optional<ApiToken>{};
  if (!t.last_used_at || now - *t.last_used_at >= kLastUsedResolutionSeconds) {
    TAKOSUMI_TRY(db_.run("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", now, t.id));
    t.last_used_at = now;
  }
  auto with = with_roles(std::move(t));
  if (!with) return std::unexpected(with.error());
  return std::optional<ApiToken>{std::move(*with)};
}

Result<std::vector<ApiToken>> ApiTokenStore::list() {
  auto tokens = collect(db_.query(std::string(kSelect) + " ORDER BY created_at, rowid"),
                        token_from_row);
  if (!tokens) return tokens;
  std::vector<ApiToken> out;
  for (auto& t : *tokens) {
    auto with = with_roles(std::move(t));
    if (!with) return std::unexpected(with.error());
    out.push_back(std::move(*with));
  }
  return out;
}

Result<ApiToken> ApiTokenStore::revoke(std::string_view id) {
  TAKOSUMI_TRY(db_.run("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                       clock_.now_unix(), id));
  return get(id);
}

}  // namespace takosumi::controlplane
