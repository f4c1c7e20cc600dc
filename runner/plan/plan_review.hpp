#pragma once
// What a Run makes of `tofu show -json` of its frozen plan, in explicit values: for a plan, its
// changes, data-loss marks, the reviewer's plan view and the values sealed with it; for a drift
// check, its report and the text of what changed outside OpenTofu. The Run (runner/run_flow)
// records them; nothing here runs tofu.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "protocol/job_manifest.hpp"
#include "protocol/plan_view.hpp"
#include "protocol/run_report.hpp"
#include "redaction/secret_set.hpp"
#include "runner/plan/plan_analysis.hpp"

namespace takosumi::runner {

// Lines of a plan or drift shown in the Run's log; the plan view (GET /api/v1/runs/{id}/plan)
// holds every change.
inline constexpr std::size_t kMaxPlanLogLines = 5000;

struct PlanReview {
  PlanAnalysis analysis;
  bool has_changes = false;  // the analysis's, or tofu's own -detailed-exitcode
  std::vector<protocol::DataLossMark> data_loss;
  // Mapped Outputs the plan marks sensitive: names only, refused before anything is applied.
  std::vector<protocol::RefusedOutput> refused_outputs;
  protocol::PlanView view;  // what the reviewer reads, redacted
  // Only a plan with changes is sealed, and only a sealed plan carries its sensitive values.
  std::vector<SecretBytes> sealed_values;
};

// plan is `tofu show -json` of the frozen plan, parsed; tofu_changed is what -detailed-exitcode
// said. Values marked sensitive or holding a secret of the Run are markers in the view.
Result<PlanReview> review_plan(const boost::json::object& plan, bool tofu_changed,
                               const std::map<std::string, protocol::OutputMapping>& allowlist,
                               const std::vector<std::string>& data_loss_patterns,
                               const redaction::SecretSet& secrets);

// The lines that close a plan Run's log: the plan as sealed, which an apply of the Run runs.
// Between the first and the last (both start "takosumi: ", which only the agent writes) is the
// frozen plan and nothing else.
std::vector<std::string> sealed_plan_lines(const protocol::PlanView& view, bool has_changes,
                                           const std::string& plan_digest);

struct DriftReview {
  protocol::DriftReport report;
  std::vector<std::string> log_lines;  // "drift: <address> (<action>)" and what changed, redacted
};

// plan is `tofu show -json` of a refresh-only plan. Exit code 2 also comes from output changes
// alone: only resource_drift decides.
Result<DriftReview> review_drift(const boost::json::object& plan, const redaction::SecretSet& secrets);

}  // namespace takosumi::runner
