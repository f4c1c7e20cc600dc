#pragma once
// Registered agents and their bearer tokens (only SHA-256 of a token is stored). A name belongs to
// one agent and that agent to its signing key: registering again with the key on record keeps the
// agent id and replaces the token; another key is refused until an operator resets the agent's
// keys naming the new key (docs/security.md "Agent identity"). Proving possession of the key is
// the caller's job. Signing keys are compared as canonical base64 text.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"
#include "protocol/registration_request.hpp"

namespace takosumi::controlplane {

using AgentRegistration = protocol::AgentRegistration;

// An agent that called within this many seconds is connected (online): it heartbeats every few.
// The agents list, the pools' load and the metrics all count with it.
inline constexpr std::int64_t kAgentConnectedSeconds = 120;

// The pool_token_id of an offline agent: admitted by an operator, not by a pool token.
inline constexpr std::string_view kOfflinePoolTokenId = "offline";

struct AgentCredential {
  std::string agent_id;
  std::string agent_token;
  bool keys_replaced = false;  // the registration brought a new signing key after a reset
  std::int64_t expires_at = 0;
};

// What the registration's connection says beyond the request: the pool token it came with
// ("config" for a configured one, empty when the agent's own credential authenticated it), the
// client certificate's identity under mutual TLS (empty without), and the pool the token admits
// to (empty: the agent's own credential, so it stays in its pool; a new agent joins "default").
struct RegistrationContext {
  std::string pool_token_id;
  std::string certificate_identity;
  std::string pool;
};

// The answer to an agent's heartbeat: a new credential when the one it used was past half its
// lifetime (or was the one a rotation replaced), and until when the one it holds is valid.
struct HeartbeatAnswer {
  std::optional<AgentCredential> rotated;
  std::int64_t expires_at = 0;
};

class AgentRegistry {
 public:
  // credential_ttl_seconds: agentCredentialTtlSeconds, how long an agent token is valid; the
  // heartbeat replaces it after half of that.
  AgentRegistry(Database& db, const Clock& clock, std::int64_t credential_ttl_seconds = 86400)
      : db_(db), clock_(clock), ttl_(credential_ttl_seconds) {}

  // The caller has verified that the registrant holds reg.sign_public_key. A new name makes a new
  // agent. For a known name: the agent with that signing key gets a fresh token, and its box key,
  // version, labels and capacity are replaced; after reset_keys() only the key the reset named is
  // taken (same agent id), and the reset is used up. Anything else: agent_key_mismatch, with a
  // message saying what the operator can do. A revoked agent is refused (agent_revoked), and
  // under mutual TLS an agent keeps the certificate identity it first registered with
  // (agent_certificate_mismatch).
  Result<AgentCredential> register_agent(const AgentRegistration& reg,
                                         const RegistrationContext& context = {});
  // The operator's explicit action for a lost or compromised agent key: revokes the agent's token
  // at once and lets the next registration under its name in with exactly new_sign_public_key
  // (canonical base64, validated by the caller). Returns the agent as it was; not_found for an
  // unknown id; conflict when another agent of the same name already holds that key.
  // The reset also lifts a revocation, and lets the registration it admits bring a new
  // certificate identity: it is the operator's one way to admit a host again.
  Result<Agent> reset_keys(std::string_view agent_id, std::string_view new_sign_public_key);
  // The agent holding this token (its current one, or the one a rotation replaced, until that
  // one's lifetime ends). unauthorized for an unknown token, agent_credential_expired past its
  // lifetime, agent_revoked after a revocation, agent_certificate_mismatch when
  // certificate_identity (the connection's, if any) is not the one on record.
  Result<Agent> authenticate(std::string_view token, std::string_view certificate_identity = {});
  // Records the agent's busy slots and contact, and rotates the credential it presented when due.
  Result<HeartbeatAnswer> heartbeat(const Agent& agent, std::string_view presented_token,
                                    std::int64_t busy_slots);
  // Refuses the agent's every later call and registration; not_found for an unknown id. The
  // caller makes its leases expire.
  Result<AgentRecord> revoke(std::string_view agent_id);
  // An agent leaving for good by itself (an ephemeral one after its Run): its credentials stop
  // working at once; listed as deregistered. Its key may register again later (the same agent),
  // and once every agent of a name has left, a new key may take the name (a new agent).
  Status deregister(const Agent& agent);
  // An offline agent (docs/air-gapped.md), registered by an operator from its public keys: its id
  // is protocol::offline_agent_id of its signing key; it has no credential (it never calls the
  // agent API) and is admitted by kOfflinePoolTokenId. Registering the same agent again changes
  // nothing; conflict when its name or id is another agent's, or it is in another pool.
  // reg.sign_public_key and box_public_key must be canonical base64 (the caller validated them).
  Result<Agent> register_offline(const AgentRegistration& reg, std::string_view pool);
  // The agent as a Run bundle's addressee: offline, not revoked, with its pool's labels.
  // not_found / conflict naming what is wrong.
  Result<Agent> offline_agent(std::string_view agent_id);
  Result<std::vector<AgentRecord>> list();
  Result<AgentRecord> get(std::string_view agent_id);

 private:
  struct NamedAgent {
    std::string id;
    std::string sign_public_key;
    bool reset = false;
    std::string awaited_key;  // a pending reset's key; empty for a v6 reset that named none
    bool revoked = false;
    std::string certificate_identity;
    bool deregistered = false;
    bool offline = false;
  };
  Result<std::vector<NamedAgent>> agents_named(std::string_view name);
  Result<HeartbeatAnswer> heartbeat_in_transaction(const Agent& agent,
                                                   std::string_view presented_token,
                                                   std::int64_t busy_slots);
  AgentRecord record_from_row(const Statement& row) const;
  Status check_not_revoked_elsewhere(const AgentRegistration& reg,
                                     const RegistrationContext& context);
  Result<AgentCredential> insert(const AgentRegistration& reg, const RegistrationContext& context);
  Result<AgentCredential> update(const NamedAgent& agent, const AgentRegistration& reg,
                                 const RegistrationContext& context);

  Database& db_;
  const Clock& clock_;
  std::int64_t ttl_;
};

}  // namespace takosumi::controlplane
