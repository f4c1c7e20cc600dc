#include "controlplane/store/agent_registry.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"
#include "common/json_fields.hpp"

namespace takosumi::controlplane {
namespace {

std::string labels_json(const std::vector<std::string>& labels) {
  boost::json::array out;
  for (const auto& l : labels) out.emplace_back(l);
  return takosumi::serialize(out);
}

std::string reset_command(std::string_view id, std::string_view key) {
  return "POST /api/v1/agents/" + std::string(id) + "/reset-keys with {\"signPublicKey\": \"" +
         std::string(key) + "\"}";
}

Error key_mismatch(std::string_view name, std::string_view id, std::string_view presented) {
  return Error{std::string(errc::kAgentKeyMismatch),
               "agent \"" + std::string(name) + "\" (" + std::string(id) +
                   ") is registered with a different signing key; start the agent with its "
                   "original key file, or, if its key was lost or replaced on purpose, have an "
                   "operator allow the new key with " + reset_command(id, presented)};
}

Error refused_by_reset(const AgentRegistration& reg, std::string_view id,
                       std::string_view awaited) {
  const std::string which = awaited.empty()
                                ? "named no key (a reset from before schema 7)"
                                : "admits only the signing key " + std::string(awaited);
  return Error{std::string(errc::kAgentKeyMismatch),
               "an operator reset the keys of agent \"" + reg.name + "\" (" + std::string(id) +
                   ") and that reset " + which + "; this registration brought " +
                   reg.sign_public_key + ": start the agent that holds the named key, or reset "
                   "again with " + reset_command(id, reg.sign_public_key)};
}

}  // namespace

Result<AgentCredential> AgentRegistry::register_agent(const AgentRegistration& reg) {
  auto named = agents_named(reg.name);
  if (!named) return std::unexpected(named.error().with_context("register agent"));
  if (named->empty()) return insert(reg);
  // Databases from before schema 6 may hold several agents of one name (a new key used to make a
  // new agent); each keeps its own key.
  auto awaited = std::ranges::find(*named, reg.sign_public_key, &NamedAgent::awaited_key);
  if (awaited != named->end()) {
    auto replaced = update(awaited->id, reg);
    if (replaced) replaced->keys_replaced = awaited->sign_public_key != reg.sign_public_key;
    return replaced;
  }
  auto same_key = std::ranges::find_if(*named, [&](const NamedAgent& a) {
    return !a.reset && a.sign_public_key == reg.sign_public_key;
  });
  if (same_key != named->end()) return update(same_key->id, reg);
  auto reset = std::ranges::find(*named, true, &NamedAgent::reset);
  if (reset != named->end())
    return std::unexpected(refused_by_reset(reg, reset->id, reset->awaited_key));
  return std::unexpected(key_mismatch(reg.name, named->front().id, reg.sign_public_key));
}

Result<std::vector<AgentRegistry::NamedAgent>> AgentRegistry::agents_named(std::string_view name) {
  auto s = db_.query(
      "SELECT id, sign_public_key, key_reset_at IS NOT NULL, coalesce(reset_sign_public_key, '')"
      " FROM agents WHERE name = ? ORDER BY created_at, id",
      name);
  return collect(std::move(s), [](const Statement& row) {
    NamedAgent agent;
    ColumnReader(row) >> agent.id >> agent.sign_public_key >> agent.reset >> agent.awaited_key;
    if (!agent.reset) agent.awaited_key.clear();
    return agent;
  });
}

Result<AgentCredential> AgentRegistry::insert(const AgentRegistration& reg) {
  AgentCredential cred{crypto::new_id("agt"), crypto::new_token()};
  const std::int64_t now = clock_.now_unix();
  TAKOSUMI_TRY(with_context(
      db_.run("INSERT INTO agents (id, name, sign_public_key, box_public_key, token_sha256,"
              " version, labels, capacity, created_at, last_seen_at)"
              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              cred.agent_id, reg.name, reg.sign_public_key, reg.box_public_key,
              crypto::token_sha256(cred.agent_token), reg.version, labels_json(reg.labels), reg.capacity,
              now, now),
      "register agent"));
  return cred;
}

// Also clears a pending reset: the new signing key is the one on record from now on.
Result<AgentCredential> AgentRegistry::update(const std::string& id, const AgentRegistration& reg) {
  AgentCredential cred{id, crypto::new_token()};
  TAKOSUMI_TRY(with_context(
      db_.run("UPDATE agents SET sign_public_key = ?, box_public_key = ?, token_sha256 = ?,"
              " version = ?, labels = ?, capacity = ?, last_seen_at = ?, key_reset_at = NULL,"
              " reset_sign_public_key = NULL WHERE id = ?",
              reg.sign_public_key, reg.box_public_key, crypto::token_sha256(cred.agent_token),
              reg.version, labels_json(reg.labels), reg.capacity, clock_.now_unix(), id),
      "register agent"));
  return cred;
}

Result<Agent> AgentRegistry::reset_keys(std::string_view agent_id,
                                        std::string_view new_sign_public_key) {
  auto taken = db_.query(
      "SELECT other.id FROM agents AS other JOIN agents AS reset ON other.name = reset.name"
      " WHERE reset.id = ? AND other.id != reset.id AND other.sign_public_key = ?",
      agent_id, new_sign_public_key);
  if (!taken) return std::unexpected(taken.error());
  auto clash = taken->step();
  if (!clash) return std::unexpected(clash.error().with_context("reset agent keys"));
  if (*clash)
    return fail(errc::kConflict, "agent " + taken->text(0) + " of the same name already has "
                "that signing key; name the key of the agent being reset");
  // An empty token_sha256 matches no token: the agent is signed out until it registers again.
  auto s = db_.query(
      "UPDATE agents SET key_reset_at = ?, reset_sign_public_key = ?, token_sha256 = ''"
      " WHERE id = ? RETURNING id, name, box_public_key, sign_public_key",
      clock_.now_unix(), new_sign_public_key, agent_id);
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
      crypto::token_sha256(token));
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail(errc::kUnauthorized, "unknown agent token");
  return Agent{s->text(0), s->text(1), s->text(2), s->text(3)};
}

}  // namespace takosumi::controlplane
