#pragma once
// What the control plane does with a Run's results, however they arrive: from its agent over the
// agent API (agent_api.hpp), or in an offline result bundle (offline_api.hpp). One definition, so
// an offline Run is recorded exactly as an online completion is.
#include <string_view>

#include "controlplane/runs/artifact_check.hpp"
#include "controlplane/runs/claim_waiters.hpp"
#include "controlplane/runs/run_queue.hpp"
#include "controlplane/runs/workspace_planner.hpp"
#include "controlplane/store/stores.hpp"

namespace takosumi::controlplane {

// An artifact of the Run, checked and stored (check_and_store_upload): recorded in the Run's index
// with artifact.uploaded, once.
Status record_artifact(const Stores& stores, const Run& run, const Agent& agent,
                       std::string_view kind, const StoredArtifact& stored);

// The report applied (RunCompletion::complete), then the workspace plans and the waiting claims told.
Status apply_run_report(RunQueue& queue, WorkspacePlanner& planner, ClaimWaiters& waiters,
                        std::string_view run_id, const Agent& agent,
                        const protocol::RunReport& report);

}  // namespace takosumi::controlplane
