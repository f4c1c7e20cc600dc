#pragma once
// The body of POST /agent/v1/register (docs/protocol.md "Register"): what an agent says of itself
// and its proof of holding its signing key. The agent writes it, the control plane reads it; the
// proof itself is crypto/registration_proof.hpp.
#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace takosumi::protocol {

// What the control plane records of an agent.
struct AgentRegistration {
  std::string name;
  std::string version;
  std::vector<std::string> labels;
  std::int64_t capacity = 1;
  std::string box_public_key;   // base64 X25519
  std::string sign_public_key;  // base64 Ed25519 (canonical once read by the control plane)
};

struct RegistrationRequest {
  AgentRegistration agent;
  std::string challenge;  // from POST /agent/v1/register/challenge, good for one registration
  std::string signature;  // crypto::sign_registration over the claim
};

boost::json::object to_json(const RegistrationRequest& r);
// Strict: unknown fields, an empty name, more than 64 labels, a capacity outside 1..1024, keys that
// are not base64 of 32 bytes and a missing proof are refused (invalid_argument).
Result<RegistrationRequest> registration_request_from_json(const boost::json::object& o);

}  // namespace takosumi::protocol
