#include "controlplane/agent_registry.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "controlplane/ids.hpp"
#include "protocol/json_fields.hpp"

namespace takosumi::controlplane {
namespace {

std::string labels_json(const std::vector<std::string>& labels) {
  boost::json::array out;
  for (const auto& l : labels) out.emplace_back(l);
  return protocol::serialize(out);
}

Error key_mismatch(std::string_view name, std::string_view id) {
  return Error{std::string(errc::kAgentKeyMismatch),
               "agent \"" + std::string(name) + "\" (" + std::string(id) +
                   ") is registered with a different signing key; start the agent with its "
                   "original key file, or, if its key was lost or replaced on purpose, have an "
                   "operator allow a new key with POST /api/v1/agents/" + std::string(id) +
                   "/reset-keys"};
}

Error reset_key_refused(std::string_view name, std::string_view id) {
  return Error{std::string(errc::kAgentKeyMismatch),
               "the keys of agent \"" + std::string(name) + "\" (" + std::string(id) +
                   ") were reset by an operator, so its old signing key is no longer accepted; "
                   "give the agent a new key (remove its keys/agent-sign.key, it creates a new "
                   "one on start) and start it again"};
}

}  // namespace

Result<AgentCredential> AgentRegistry::register_agent(const AgentRegistration& reg) {
  auto named = agents_named(reg.name);
  if (!named) return std::unexpected(named.error().with_context("register agent"));
  if (named->empty()) return insert(reg);
  // Databases from before schema 6 may hold several agents of one name (a new key used to make a
  // new agent); each keeps its own key.
  auto same_key = std::ranges::find(*named, reg.sign_public_key, &NamedAgent::sign_public_key);
  if (same_key != named->end()) {
    if (same_key->reset) return std::unexpected(reset_key_refused(reg.name, same_key->id));
    return update(same_key->id, reg);
  }
  auto reset = std::ranges::find(*named, true, &NamedAgent::reset);
  if (reset == named->end()) return std::unexpected(key_mismatch(reg.name, named->front().id));
  auto replaced = update(reset->id, reg);
  if (replaced) replaced->keys_replaced = true;
  return replaced;
}

Result<std::vector<AgentRegistry::NamedAgent>> AgentRegistry::agents_named(std::string_view name) {
  auto s = db_.query(
      "SELECT id, sign_public_key, key_reset_at IS NOT NULL FROM agents WHERE name = ?"
      " ORDER BY created_at, id",
      name);
  if (!s) return std::unexpected(s.error());
  std::vector<NamedAgent> out;
  for (;;) {
    auto row = s->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return out;
    out.push_back(NamedAgent{s->text(0), s->text(1), s->integer(2) != 0});
  }
}

Result<AgentCredential> AgentRegistry::insert(const AgentRegistration& reg) {
  AgentCredential cred{new_id("agt"), new_token()};
  const std::int64_t now = clock_.now_unix();
  TAKOSUMI_TRY(with_context(
      db_.run("INSERT INTO agents (id, name, sign_public_key, box_public_key, token_sha256,"
              " version, labels, capacity, created_at, last_seen_at)"
              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              cred.agent_id, reg.name, reg.sign_public_key, reg.box_public_key,
              token_sha256(cred.agent_token), reg.version, labels_json(reg.labels), reg.capacity,
              now, now),
      "register agent"));
  return cred;
}

// Also clears a pending reset: the new signing key is the one on record from now on.
Result<AgentCredential> AgentRegistry::update(const std::string& id, const AgentRegistration& reg) {
  AgentCredential cred{id, new_token()};
  TAKOSUMI_TRY(with_context(
      db_.run("UPDATE agents SET sign_public_key = ?, box_public_key = ?, token_sha256 = ?,"
              " version = ?, labels = ?, capacity = ?, last_seen_at = ?, key_reset_at = NULL"
              " WHERE id = ?",
              reg.sign_public_key, reg.box_public_key, token_sha256(cred.agent_token),
              reg.version, labels_json(reg.labels), reg.capacity, clock_.now_unix(), id),
      "register agent"));
  return cred;
}

Result<Agent> AgentRegistry::reset_keys(std::string_view agent_id) {
  // An empty token_sha256 matches no token: the agent is signed out until it registers again.
  auto s = db_.query(
      "UPDATE agents SET key_reset_at = ?, token_sha256 = '' WHERE id = ?"
      " RETURNING id, name, box_public_key, sign_public_key",
      clock_.now_unix(), agent_id);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error().with_context("reset agent keys"));
  if (!*row) return fail(errc::kNotFound, "no agent with id \"" + std::string(agent_id) + "\"");
  Agent agent{s->text(0), s->text(1), s->text(2), s->text(3)};
  TAKOSUMI_TRY(s->run());
  return agent;
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
