#pragma once
// Drives workspace plans (docs/passing-values.md, "Planning a Workspace"): a step's plan Run is
// created only once every producer it waits for in the same workspace plan is done — its plan
// found no changes, or the apply of that plan succeeded. advance() is called when a workspace
// plan starts and after every Run an agent completes; it never resolves a ref (each step's commit
// was resolved when the plan was asked for), so it is cheap enough for the completion path.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "controlplane/store/stores.hpp"

namespace takosumi::controlplane {

namespace step_state {
inline constexpr std::string_view kWaiting = "waiting";             // for its producers
inline constexpr std::string_view kPlanning = "planning";           // plan queued or running
inline constexpr std::string_view kAwaitingApply = "awaiting_apply";  // plan has changes
inline constexpr std::string_view kApplying = "applying";
inline constexpr std::string_view kDone = "done";
inline constexpr std::string_view kFailed = "failed";    // its plan or apply did not succeed
// Its plan cannot be applied any more: another apply moved the Capsule to a new generation.
inline constexpr std::string_view kSuperseded = "superseded";
inline constexpr std::string_view kSkipped = "skipped";  // destroyed before its plan was made
inline constexpr std::string_view kBlocked = "blocked";  // a producer failed or is blocked
}  // namespace step_state

struct StepProgress {
  const WorkspacePlanStep* step = nullptr;
  std::string_view state;
  std::optional<Run> plan;
  std::optional<Run> apply;
  std::vector<std::string> waiting_for;  // producers not done yet
};

// The progress of every step of `plan`, in its order.
Result<std::vector<StepProgress>> plan_progress(const Stores& stores, const WorkspacePlan& plan);
// "running" while a step can still move, "succeeded" when every step is done, "failed" when every
// step that is not done failed, was superseded or skipped, or is blocked.
std::string_view plan_status(const std::vector<StepProgress>& progress);

class WorkspacePlanner {
 public:
  explicit WorkspacePlanner(const Stores& stores) : stores_(stores) {}

  // Creates the plan Run of every step of the Workspace's unfinished workspace plans whose
  // producers are done, each audited as run.created by the plan's creator. Returns how many.
  Result<int> advance(std::string_view workspace_id);
  // advance() for the Workspace of the Run's Capsule.
  Result<int> advance_after(std::string_view run_id);
  // advance() for every Workspace with an unfinished plan: at start, for a completion whose
  // advance did not happen (a crash between the two).
  Status advance_all();

 private:
  Stores stores_;
};

}  // namespace takosumi::controlplane
