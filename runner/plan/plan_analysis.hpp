#pragma once
// Reads the machine-readable plan (`tofu show -json <planfile>`, format_version 1.x; unknown keys
// are ignored) into the Run report's change list and summary.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::runner {

struct PlanAnalysis {
  std::vector<protocol::ResourceChange> resource_changes;  // no-op and read left out
  protocol::ChangeSummary summary;
  // Any resource change, or any output change (applying the plan would change the state).
  bool has_changes = false;
  // address → OpenTofu's action_reason (e.g. "replace_because_cannot_update"), where given.
  std::map<std::string, std::string> action_reasons;
};

// Errors: opentofu_failed when the text is not a plan document of format_version 1.x.
Result<PlanAnalysis> analyze_plan(std::string_view show_json);
// The same for a plan JSON the caller has parsed already (it also collects secrets from it).
Result<PlanAnalysis> analyze_plan(const boost::json::object& show_json);

// Classifies one action list ("create", "delete"+"create", ...); exposed for tests.
protocol::ResourceChange classify_change(std::string address, std::string type,
                                         std::vector<std::string> actions);

}  // namespace takosumi::runner
