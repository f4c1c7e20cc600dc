#pragma once
// Registered agents and their bearer tokens (only SHA-256 of a token is stored). A name belongs to
// one agent and that agent to its signing key: registering again with the key on record keeps the
// agent id and replaces the token; another key is refused until an operator resets the agent's
// keys naming the new key (docs/security.md "Agent identity"). Proving possession of the key is
// the caller's job. Signing keys are compared as canonical base64 text.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/model.hpp"
#include "controlplane/store/sqlite_db.hpp"
#include "protocol/registration_request.hpp"

namespace takosumi::controlplane {

using AgentRegistration = protocol::AgentRegistration;

struct AgentCredential {
  std::string agent_id;
  std::string agent_token;
  bool keys_replaced = false;  // the registration brought a new signing key after a reset
};

class AgentRegistry {
 public:
  AgentRegistry(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  // The caller has verified that the registrant holds reg.sign_public_key. A new name makes a new
  // agent. For a known name: the agent with that signing key gets a fresh token, and its box key,
  // version, labels and capacity are replaced; after reset_keys() only the key the reset named is
  // taken (same agent id), and the reset is used up. Anything else: agent_key_mismatch, with a
  // message saying what the operator can do.
  Result<AgentCredential> register_agent(const AgentRegistration& reg);
  // The operator's explicit action for a lost or compromised agent key: revokes the agent's token
  // at once and lets the next registration under its name in with exactly new_sign_public_key
  // (canonical base64, validated by the caller). Returns the agent as it was; not_found for an
  // unknown id; conflict when another agent of the same name already holds that key.
  Result<Agent> reset_keys(std::string_view agent_id, std::string_view new_sign_public_key);
  // unauthorized for an unknown token.
  Result<Agent> authenticate(std::string_view token);

 private:
  struct NamedAgent {
    std::string id;
    std::string sign_public_key;
    bool reset = false;
    std::string awaited_key;  // a pending reset's key; empty for a v6 reset that named none
  };
  Result<std::vector<NamedAgent>> agents_named(std::string_view name);
  Result<AgentCredential> insert(const AgentRegistration& reg);
  Result<AgentCredential> update(const std::string& id, const AgentRegistration& reg);

  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
