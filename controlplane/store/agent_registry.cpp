#include "controlplane/store/agent_registry.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "protocol/offline_bundle.hpp"
#include "controlplane/store/agent_pool_store.hpp"
#include "crypto/random_ids.hpp"
#include "common/json_fields.hpp"

namespace takosumi::controlplane {
namespace {

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

Result<AgentCredential> AgentRegistry::register_agent(const AgentRegistration& reg,
                                                     const RegistrationContext& context) {
  auto named = agents_named(reg.name);
  if (!named) return std::unexpected(named.error().with_context("register agent"));
  if (auto offline = std::ranges::find_if(*named, &NamedAgent::offline); offline != named->end())
    return fail(errc::kConflict, "agent \"" + reg.name + "\" (" + offline->id +
                                     ") is an offline agent: it takes Runs only as offline Run "
                                     "bundles and never registers over the network");
  if (named->empty()) {
    TAKOSUMI_TRY(check_not_revoked_elsewhere(reg, context));
    return insert(reg, context);
  }
  // Databases from before schema 6 may hold several agents of one name (a new key used to make a
  // new agent); each keeps its own key.
  auto awaited = std::ranges::find(*named, reg.sign_public_key, &NamedAgent::awaited_key);
  if (awaited != named->end()) {
    auto replaced = update(*awaited, reg, context);
    if (replaced) replaced->keys_replaced = awaited->sign_public_key != reg.sign_public_key;
    return replaced;
  }
  // A revoked name stays out whatever key it brings, until an operator's reset (above).
  if (auto revoked = std::ranges::find_if(*named, [](const NamedAgent& a) { return a.revoked; });
      revoked != named->end())
    return fail(errc::kAgentRevoked,
                "agent \"" + reg.name + "\" (" + revoked->id + ") was revoked by an operator; only "
                "an operator's POST /api/v1/agents/" + revoked->id + "/reset-keys admits it again");
  auto same_key = std::ranges::find_if(*named, [&](const NamedAgent& a) {
    return !a.reset && a.sign_public_key == reg.sign_public_key;
  });
  if (same_key != named->end()) return update(*same_key, reg, context);
  auto reset = std::ranges::find(*named, true, &NamedAgent::reset);
  if (reset != named->end())
    return std::unexpected(refused_by_reset(reg, reset->id, reset->awaited_key));
  // Every agent of the name left by itself (ephemeral agents of one pool share a name, each
  // with a fresh key): the name is free for a new agent.
  if (std::ranges::all_of(*named, &NamedAgent::deregistered)) {
    TAKOSUMI_TRY(check_not_revoked_elsewhere(reg, context));
    return insert(reg, context);
  }
  return std::unexpected(key_mismatch(reg.name, named->front().id, reg.sign_public_key));
}

Result<Agent> AgentRegistry::register_offline(const AgentRegistration& reg, std::string_view pool) {
  const std::string id = protocol::offline_agent_id(reg.sign_public_key);
  return in_transaction(db_, [&]() -> Result<Agent> {
    auto named = agents_named(reg.name);
    if (!named) return std::unexpected(named.error());
    for (const auto& agent : *named)
      if (agent.id != id || !agent.offline)
        return fail(errc::kConflict, "the name \"" + reg.name + "\" belongs to agent " + agent.id +
                                         "; give the offline agent a name of its own");
    auto existing = get(id);
    if (existing && existing->pool != pool)
      return fail(errc::kConflict, "agent " + id + " is registered offline in pool \"" +
                                       existing->pool + "\", not \"" + std::string(pool) + "\"");
    if (existing && existing->revoked_at)
      return fail(errc::kAgentRevoked, "agent " + id + " was revoked by an operator");
    if (!existing && existing.error().code != errc::kNotFound)
      return std::unexpected(existing.error());
    if (!existing) {
      TAKOSUMI_TRY(check_not_revoked_elsewhere(reg, {}));
      const std::int64_t now = clock_.now_unix();
      // No credential: the token hash is of a token nobody was ever given.
      TAKOSUMI_TRY(with_context(
          db_.run("INSERT INTO agents (id, name, sign_public_key, box_public_key, token_sha256,"
                  " version, labels, capacity, created_at, last_seen_at, token_issued_at,"
                  " pool_token_id, pool, certificate_identity, busy_slots)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0)",
                  id, reg.name, reg.sign_public_key, reg.box_public_key,
                  crypto::token_sha256(crypto::new_token()), reg.version,
                  agent_labels_text(reg.labels), reg.capacity, now, now, now,
                  std::string(kOfflinePoolTokenId), std::string(pool)),
          "register offline agent"));
    } else if (existing->name != reg.name) {
      return fail(errc::kConflict, "agent " + id + " is registered offline as \"" +
                                       existing->name + "\"");
    }
    auto agent = offline_agent(id);
    if (agent && agent->box_public_key != reg.box_public_key)
      return fail(errc::kConflict, "agent " + id + " is registered offline with another box key");
    return agent;
  });
}

Result<Agent> AgentRegistry::offline_agent(std::string_view agent_id) {
  auto s = db_.query(
      "SELECT a.id, a.name, a.box_public_key, a.sign_public_key, a.revoked_at IS NOT NULL,"
      " coalesce(a.pool_token_id, '') = ?, a.pool, a.labels, coalesce(p.labels, '[]')"
      " FROM agents a LEFT JOIN agent_pools p ON p.name = a.pool WHERE a.id = ?",
      kOfflinePoolTokenId, agent_id);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail(errc::kNotFound, "agent " + std::string(agent_id) + " not found");
  Agent agent;
  bool revoked = false, offline = false;
  std::string own_labels, pool_labels;
  ColumnReader(*s) >> agent.id >> agent.name >> agent.box_public_key >> agent.sign_public_key >>
      revoked >> offline >> agent.pool >> own_labels >> pool_labels;
  agent.labels = agent_labels_from_text(own_labels);
  for (auto& label : agent_labels_from_text(pool_labels)) agent.labels.push_back(std::move(label));
  if (!offline)
    return fail(errc::kConflict, "agent " + agent.id + " is not an offline agent (register one "
                                 "with POST /api/v1/agents/offline)");
  if (revoked) return fail(errc::kAgentRevoked, "agent " + agent.id + " was revoked by an operator");
  return agent;
}

// A revoked agent does not come back under a new name with its signing key or, under mutual TLS,
// its certificate.
Status AgentRegistry::check_not_revoked_elsewhere(const AgentRegistration& reg,
                                                  const RegistrationContext& context) {
  auto s = db_.query(
      "SELECT id FROM agents WHERE revoked_at IS NOT NULL AND (sign_public_key = ?"
      " OR (? != '' AND certificate_identity = ?)) LIMIT 1",
      reg.sign_public_key, context.certificate_identity, context.certificate_identity);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (*row)
    return fail(errc::kAgentRevoked,
                "this signing key or client certificate belongs to agent " + s->text(0) +
                    ", which an operator revoked; it does not register under another name");
  return {};
}

Result<std::vector<AgentRegistry::NamedAgent>> AgentRegistry::agents_named(std::string_view name) {
  auto s = db_.query(
      "SELECT id, sign_public_key, key_reset_at IS NOT NULL, coalesce(reset_sign_public_key, ''),"
      " revoked_at IS NOT NULL, coalesce(certificate_identity, ''), deregistered_at IS NOT NULL,"
      " coalesce(pool_token_id, '') = 'offline'"
      " FROM agents WHERE name = ? ORDER BY created_at, id",
      name);
  return collect(std::move(s), [](const Statement& row) {
    NamedAgent agent;
    ColumnReader(row) >> agent.id >> agent.sign_public_key >> agent.reset >> agent.awaited_key >>
        agent.revoked >> agent.certificate_identity >> agent.deregistered >> agent.offline;
    if (!agent.reset) agent.awaited_key.clear();
    return agent;
  });
}

Result<AgentCredential> AgentRegistry::insert(const AgentRegistration& reg,
                                             const RegistrationContext& context) {
  const std::int64_t now = clock_.now_unix();
  AgentCredential cred{crypto::new_id("agt"), crypto::new_token(), false, now + ttl_};
  TAKOSUMI_TRY(with_context(
      db_.run("INSERT INTO agents (id, name, sign_public_key, box_public_key, token_sha256,"
              " version, labels, capacity, created_at, last_seen_at, token_issued_at,"
              " pool_token_id, pool, certificate_identity, busy_slots)"
              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
              cred.agent_id, reg.name, reg.sign_public_key, reg.box_public_key,
              crypto::token_sha256(cred.agent_token), reg.version, agent_labels_text(reg.labels),
              reg.capacity, now, now, now, context.pool_token_id,
              context.pool.empty() ? std::string(kDefaultPool) : context.pool,
              context.certificate_identity),
      "register agent"));
  return cred;
}

// Also clears a pending reset: the new signing key is the one on record from now on. The
// certificate identity is recorded the first time the agent comes with one, and kept.
Result<AgentCredential> AgentRegistry::update(const NamedAgent& agent, const AgentRegistration& reg,
                                              const RegistrationContext& context) {
  if (agent.revoked && !agent.reset)
    return fail(errc::kAgentRevoked,
                "agent \"" + reg.name + "\" (" + agent.id + ") was revoked by an operator; only "
                "an operator's POST /api/v1/agents/" + agent.id + "/reset-keys admits it again");
  // After an operator's reset the host may come back with a new certificate too.
  if (!agent.reset && !agent.certificate_identity.empty() &&
      !context.certificate_identity.empty() &&
      agent.certificate_identity != context.certificate_identity)
    return fail(errc::kAgentCertificateMismatch,
                "agent \"" + reg.name + "\" (" + agent.id + ") registered with the client "
                "certificate \"" + agent.certificate_identity + "\", not \"" +
                context.certificate_identity + "\"; use that certificate (renewed with the same "
                "subject), or have an operator reset the agent's keys");
  const std::int64_t now = clock_.now_unix();
  AgentCredential cred{agent.id, crypto::new_token(), false, now + ttl_};
  TAKOSUMI_TRY(with_context(
      db_.run("UPDATE agents SET sign_public_key = ?, box_public_key = ?, token_sha256 = ?,"
              " version = ?, labels = ?, capacity = ?, last_seen_at = ?, key_reset_at = NULL,"
              " reset_sign_public_key = NULL, revoked_at = NULL, deregistered_at = NULL,"
              " token_issued_at = ?,"
              " previous_token_sha256 = NULL, previous_token_expires_at = NULL,"
              " pool_token_id = CASE WHEN ? = '' THEN pool_token_id ELSE ? END,"
              " pool = CASE WHEN ? = '' THEN pool ELSE ? END,"
              " certificate_identity = CASE WHEN ? = 1 THEN nullif(?, '')"
              "   ELSE coalesce(nullif(certificate_identity, ''), ?) END"
              " WHERE id = ?",
              reg.sign_public_key, reg.box_public_key, crypto::token_sha256(cred.agent_token),
              reg.version, agent_labels_text(reg.labels), reg.capacity, now, now,
              context.pool_token_id, context.pool_token_id, context.pool, context.pool, agent.reset,
              context.certificate_identity, context.certificate_identity, agent.id),
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
      "UPDATE agents SET key_reset_at = ?, reset_sign_public_key = ?, token_sha256 = '',"
      " previous_token_sha256 = NULL"
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

Result<Agent> AgentRegistry::authenticate(std::string_view token,
                                          std::string_view certificate_identity) {
  const std::int64_t now = clock_.now_unix();
  auto s = db_.query(
      "SELECT a.id, a.name, a.box_public_key, a.sign_public_key, a.revoked_at IS NOT NULL,"
      " coalesce(a.certificate_identity, ''), a.token_sha256 = ?1,"
      " coalesce(a.token_issued_at, a.created_at), a.previous_token_sha256 IS NOT NULL,"
      " a.pool, a.labels, coalesce(p.labels, '[]')"
      " FROM agents a LEFT JOIN agent_pools p ON p.name = a.pool WHERE a.token_sha256 = ?1"
      "  OR (a.previous_token_sha256 = ?1 AND a.previous_token_expires_at > ?2)",
      crypto::token_sha256(token), now);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail(errc::kUnauthorized, "unknown agent token");
  Agent agent;
  bool revoked = false, current = false, replaced_pending = false;
  std::string recorded, own_labels, pool_labels;
  std::int64_t issued = 0;
  ColumnReader(*s) >> agent.id >> agent.name >> agent.box_public_key >> agent.sign_public_key >>
      revoked >> recorded >> current >> issued >> replaced_pending >> agent.pool >> own_labels >>
      pool_labels;
  agent.labels = agent_labels_from_text(own_labels);
  for (auto& label : agent_labels_from_text(pool_labels)) agent.labels.push_back(std::move(label));
  if (revoked)
    return fail(errc::kAgentRevoked, "agent " + agent.id + " was revoked by an operator");
  if (current && issued + ttl_ <= now)
    return fail(errc::kAgentCredentialExpired,
                "the agent credential expired (agentCredentialTtlSeconds); register again");
  // The first use of a rotated token retires the one it replaced: from then on the old token is
  // worth nothing, so a copy of it cannot be traded for successors. Only while the presented
  // token is still current: a rotation that another replica made since the read stands.
  if (current && replaced_pending)
    TAKOSUMI_TRY(db_.run("UPDATE agents SET previous_token_sha256 = NULL,"
                         " previous_token_expires_at = NULL WHERE id = ? AND token_sha256 = ?",
                         agent.id, crypto::token_sha256(token)));
  if (!recorded.empty() && !certificate_identity.empty() && recorded != certificate_identity)
    return fail(errc::kAgentCertificateMismatch,
                "agent " + agent.id + " registered with another client certificate");
  return agent;
}

// The read and the rotation in one writer's transaction: two heartbeats of one agent reaching
// two replicas at once must not both rotate (the second would retire the first's new token).
Result<HeartbeatAnswer> AgentRegistry::heartbeat(const Agent& agent,
                                                 std::string_view presented_token,
                                                 std::int64_t busy_slots) {
  return in_transaction(db_, [&] { return heartbeat_in_transaction(agent, presented_token, busy_slots); });
}

Result<HeartbeatAnswer> AgentRegistry::heartbeat_in_transaction(const Agent& agent,
                                                                std::string_view presented_token,
                                                                std::int64_t busy_slots) {
  const std::int64_t now = clock_.now_unix();
  const std::string presented = crypto::token_sha256(presented_token);
  auto s = db_.query(
      "SELECT token_sha256, coalesce(token_issued_at, created_at),"
      " coalesce(previous_token_sha256, ''), coalesce(previous_token_expires_at, 0)"
      " FROM agents WHERE id = ?",
      agent.id);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail(errc::kUnauthorized, "unknown agent");
  std::string current, previous;
  std::int64_t issued = 0, previous_expires = 0;
  ColumnReader(*s) >> current >> issued >> previous >> previous_expires;
  HeartbeatAnswer answer;
  // The replaced token came back before its successor was ever used (authenticate() retires it at
  // that first use): the answer that carried the successor was lost, so it gets another one in
  // its place; the replaced token keeps only its own remaining lifetime.
  const bool replaced_came_back = presented == previous && presented != current;
  const bool due = presented == current && now - issued >= ttl_ / 2;
  if (due || replaced_came_back) {
    AgentCredential next{agent.id, crypto::new_token(), false, now + ttl_};
    const std::string keep = replaced_came_back ? previous : current;
    const std::int64_t keep_until = replaced_came_back ? previous_expires : issued + ttl_;
    TAKOSUMI_TRY(db_.run("UPDATE agents SET token_sha256 = ?, token_issued_at = ?,"
                         " previous_token_sha256 = ?, previous_token_expires_at = ?,"
                         " last_seen_at = ?, busy_slots = ? WHERE id = ?",
                         crypto::token_sha256(next.agent_token), now, keep, keep_until, now,
                         busy_slots, agent.id));
    answer.expires_at = next.expires_at;
    answer.rotated = std::move(next);
    return answer;
  }
  TAKOSUMI_TRY(db_.run("UPDATE agents SET last_seen_at = ?, busy_slots = ? WHERE id = ?", now,
                       busy_slots, agent.id));
  answer.expires_at = presented == current ? issued + ttl_ : previous_expires;
  return answer;
}

namespace {

constexpr std::string_view kRecordSelect =
    "SELECT id, name, version, labels, capacity, coalesce(busy_slots, 0), created_at,"
    " last_seen_at, coalesce(certificate_identity, ''), coalesce(pool_token_id, ''), pool,"
    " revoked_at,"
    " key_reset_at IS NOT NULL, coalesce(token_issued_at, created_at), deregistered_at"
    " FROM agents";

}  // namespace

Result<std::vector<AgentRecord>> AgentRegistry::list() {
  return collect(db_.query(std::string(kRecordSelect) + " ORDER BY name, created_at, id"),
                 [this](const Statement& row) { return record_from_row(row); });
}

Result<AgentRecord> AgentRegistry::get(std::string_view agent_id) {
  return one_row(db_.query(std::string(kRecordSelect) + " WHERE id = ?", agent_id),
                 "agent " + std::string(agent_id),
                 [this](const Statement& row) { return record_from_row(row); });
}

AgentRecord AgentRegistry::record_from_row(const Statement& row) const {
  AgentRecord a;
  std::string labels;
  std::int64_t issued = 0;
  ColumnReader(row) >> a.id >> a.name >> a.version >> labels >> a.capacity >> a.busy_slots >>
      a.created_at >> a.last_seen_at >> a.certificate_identity >> a.pool_token_id >> a.pool >>
      a.revoked_at >> a.keys_reset >> issued >> a.deregistered_at;
  a.labels = agent_labels_from_text(labels);
  if (!a.revoked_at && !a.keys_reset && !a.deregistered_at) a.token_expires_at = issued + ttl_;
  return a;
}

// No token hashes to the placeholder, so neither credential authenticates any more.
Status AgentRegistry::deregister(const Agent& agent) {
  return db_.run("UPDATE agents SET deregistered_at = ?, token_sha256 = 'deregistered',"
                 " previous_token_sha256 = NULL, busy_slots = 0 WHERE id = ?",
                 clock_.now_unix(), agent.id);
}

Result<AgentRecord> AgentRegistry::revoke(std::string_view agent_id) {
  // A pending reset is dropped: revocation is the later word, and only a reset made after it
  // admits the agent again.
  TAKOSUMI_TRY(db_.run("UPDATE agents SET revoked_at = coalesce(revoked_at, ?),"
                       " previous_token_sha256 = NULL, key_reset_at = NULL,"
                       " reset_sign_public_key = NULL WHERE id = ?",
                       clock_.now_unix(), agent_id));
  return get(agent_id);
}

}  // namespace takosumi::controlplane
