#include "controlplane/store/pool_token_store.hpp"

#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kSecretPrefix = "pool_";
constexpr std::string_view kSelect =
    "SELECT id, name, pool, created_by, created_at, revoked_at FROM pool_tokens";

PoolToken token_from_row(const Statement& s) {
  PoolToken t;
  ColumnReader(s) >> t.id >> t.name >> t.pool >> t.created_by >> t.created_at >> t.revoked_at;
  return t;
}

}  // namespace

Result<CreatedPoolToken> PoolTokenStore::create(std::string name, std::string pool,
                                                std::string_view created_by) {
  CreatedPoolToken created{
      PoolToken{crypto::new_id("ptk"), std::move(name), std::move(pool), std::string(created_by),
                clock_.now_unix(), std::nullopt},
      SecretBytes::from_string(std::string(kSecretPrefix) + crypto::new_token())};
  const PoolToken& t = created.token;
  TAKOSUMI_TRY(db_.run("INSERT INTO pool_tokens (id, name, pool, secret_sha256, created_by,"
                       " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                       t.id, t.name, t.pool, crypto::token_sha256(created.secret.reveal_as_string()),
                       t.created_by, t.created_at));
  return created;
}

Result<std::optional<ActivePoolToken>> PoolTokenStore::find_active(std::string_view secret) {
  auto s = db_.query("SELECT id, pool FROM pool_tokens WHERE secret_sha256 = ? AND revoked_at IS NULL",
                     crypto::token_sha256(secret));
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<ActivePoolToken>();
  return std::optional<ActivePoolToken>(ActivePoolToken{s->text(0), s->text(1)});
}

Result<std::vector<PoolToken>> PoolTokenStore::list() {
  return collect(db_.query(std::string(kSelect) + " ORDER BY created_at, id"), token_from_row);
}

Result<PoolToken> PoolTokenStore::revoke(std::string_view id) {
  TAKOSUMI_TRY(db_.run("UPDATE pool_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?",
                       clock_.now_unix(), id));
  return one_row(db_.query(std::string(kSelect) + " WHERE id = ?", id),
                 "pool token " + std::string(id), token_from_row);
}

}  // namespace takosumi::controlplane
