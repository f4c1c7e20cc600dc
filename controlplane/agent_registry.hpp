#pragma once
// Registered agents and their bearer tokens (only SHA-256 of a token is stored). Registering again
// with the same name and signing key keeps the agent id and replaces the token.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/model.hpp"
#include "controlplane/sqlite_db.hpp"

namespace takosumi::controlplane {

struct AgentRegistration {
  std::string name;
  std::string version;
  std::vector<std::string> labels;
  std::int64_t capacity = 1;
  std::string box_public_key;   // base64, validated by the caller
  std::string sign_public_key;  // base64, validated by the caller
};

struct AgentCredential {
  std::string agent_id;
  std::string agent_token;
};

class AgentRegistry {
 public:
  AgentRegistry(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  Result<AgentCredential> register_agent(const AgentRegistration& reg);
  // unauthorized for an unknown token.
  Result<Agent> authenticate(std::string_view token);

 private:
  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
