#pragma once
// A manifest as a control plane would address one to the test agent "agt_test" for a Run of the
// module at `source`, with placeholder key fields; each test sets what its case needs on top.
#include <string>

#include "crypto/keys.hpp"
#include "protocol/job_manifest.hpp"

namespace takosumi::testing {

inline protocol::JobManifest test_manifest(const std::string& run_id, protocol::RunType type,
                                           protocol::SourceSpec source) {
  protocol::JobManifest m;
  m.run_id = run_id;
  m.attempt = 1;
  m.agent_id = "agt_test";
  m.type = type;
  m.workspace_id = "ws_1";
  m.capsule_id = "cap_1";
  m.source = std::move(source);
  m.control_public_key = "k";
  m.control_key_id = "k1";
  return m;
}

// The same, naming the control plane's real public key (for sealed artifacts the test opens).
inline protocol::JobManifest test_manifest(const std::string& run_id, protocol::RunType type,
                                           protocol::SourceSpec source,
                                           const crypto::BoxPublicKey& control_public_key) {
  auto m = test_manifest(run_id, type, std::move(source));
  m.control_public_key = control_public_key.to_base64();
  return m;
}

}  // namespace takosumi::testing
