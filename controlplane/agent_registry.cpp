#include "controlplane/agent_registry.hpp"

#include "common/error_codes.hpp"
#include "controlplane/ids.hpp"
#include "protocol/json_fields.hpp"

namespace takosumi::controlplane {

Result<AgentCredential> AgentRegistry::register_agent(const AgentRegistration& reg) {
  boost::json::array labels;
  for (const auto& l : reg.labels) labels.emplace_back(l);
  const std::string token = new_token();
  const std::int64_t now = clock_.now_unix();
  auto s = db_.query(
      "INSERT INTO agents (id, name, sign_public_key, box_public_key, token_sha256, version,"
      " labels, capacity, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (name, sign_public_key) DO UPDATE SET box_public_key = excluded.box_public_key,"
      " token_sha256 = excluded.token_sha256, version = excluded.version,"
      " labels = excluded.labels, capacity = excluded.capacity, last_seen_at = excluded.last_seen_at"
      " RETURNING id",
      new_id("agt"), reg.name, reg.sign_public_key, reg.box_public_key, token_sha256(token),
      reg.version, protocol::serialize(labels), reg.capacity, now, now);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error().with_context("register agent"));
  if (!*row) return fail(errc::kInternal, "register agent: no id returned");
  std::string id = s->text(0);
  TAKOSUMI_TRY(s->run());
  return AgentCredential{std::move(id), token};
}

Result<Agent> AgentRegistry::authenticate(std::string_view token) {
  auto s = db_.query(
      "SELECT id, name, box_public_key, sign_public_key FROM agents WHERE token_sha256 = ?",
      token_sha256(token));
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail(errc::kUnauthorized, "unknown agent token");
  return Agent{s->text(0), s->text(1), s->text(2), s->text(3)};
}

}  // namespace takosumi::controlplane
