#include "controlplane/runs/run_intake.hpp"

#include <spdlog/spdlog.h>

namespace takosumi::controlplane {

Status record_artifact(const Stores& stores, const Run& run, const Agent& agent,
                       std::string_view kind, const StoredArtifact& stored) {
  return in_transaction(stores.db, [&]() -> Status {
    auto fresh = stores.runs.record_artifact(run.id, kind, stored.sha256, stored.size);
    if (!fresh || !*fresh) return fresh ? Status{} : std::unexpected(fresh.error());
    return stores.audit.record(run_event(agent_actor(agent.id), "artifact.uploaded", run,
                                         {{"kind", std::string(kind)},
                                          {"sha256", stored.sha256},
                                          {"size", stored.size}}));
  });
}

Status apply_run_report(RunQueue& queue, WorkspacePlanner& planner, ClaimWaiters& waiters,
                        std::string_view run_id, const Agent& agent,
                        const protocol::RunReport& report) {
  TAKOSUMI_TRY(queue.completion().complete(run_id, agent, report));
  // A workspace plan may have consumers waiting for this Run; the completion stands either way,
  // and the next completion in the Workspace advances it again.
  if (auto advanced = planner.advance_after(std::string(run_id)); !advanced)
    spdlog::warn("workspace plans after run {}: {}", run_id, advanced.error().to_string());
  waiters.notify();  // the Capsule may have queued Runs waiting for this one
  return {};
}

}  // namespace takosumi::controlplane
