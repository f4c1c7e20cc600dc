#pragma once
// `takosumi-agent run-bundle execute BUNDLE --out RESULT` (docs/air-gapped.md): one Run of an
// offline Run bundle, on a host that never talks to the control plane. The bundle's job goes
// through the same RunSession as a claimed one, over a BundleChannel instead of the network: the
// manifest's signature, addressee (this agent's offline id), expiry and nonce, the state's header
// and digests, the source's commit and tree are all checked as online; the Run is journaled and
// checkpointed; the network is `none` whatever the policies say. Then the result bundle is
// written, signed with this agent's key.
// A Run the agent did not finish (SIGKILL, power loss) is finished by running the same command
// again: the journal's recovery reports it with the state tofu persisted. A Run already finished
// writes its result again. The state directory must hold no other journaled Run.
#include <filesystem>

#include "agent/agent_daemon.hpp"
#include "agent/service/sandbox_probe.hpp"
#include "common/clock.hpp"
#include "config/agent_config.hpp"

namespace takosumi::agent {

struct OfflineRunContext {
  const config::AgentConfig& config;
  const AgentKeys& keys;
  const SandboxProbe& sandbox;
  const Clock& clock;
};

// 0: the result bundle is written (the Run itself may have failed: its report says so). 1: the
// bundle was refused or no result could be written; logged with what to do.
int execute_run_bundle(const OfflineRunContext& ctx, const std::filesystem::path& bundle,
                       const std::filesystem::path& result);

// The agent's public keys and offline id as JSON, for POST /api/v1/agents/offline on the connected
// side: {"name", "agentId", "boxPublicKey", "signPublicKey"}.
std::string offline_keys_json(const config::AgentConfig& config, const AgentKeys& keys);

}  // namespace takosumi::agent
