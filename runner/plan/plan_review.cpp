#include "runner/plan/plan_review.hpp"

#include "protocol/plan_view_text.hpp"
#include "redaction/sensitive_values.hpp"
#include "runner/plan/data_loss.hpp"
#include "runner/plan/drift_analysis.hpp"
#include "runner/plan/output_filter.hpp"
#include "runner/plan/plan_view_build.hpp"

namespace takosumi::runner {
namespace {

// The mapped outputs a plan's planned_values mark sensitive (their values may still be unknown).
std::vector<std::string> planned_sensitive_outputs(
    const boost::json::object& plan, const std::map<std::string, protocol::OutputMapping>& allowlist) {
  const boost::json::value* values = plan.if_contains("planned_values");
  const boost::json::value* outputs =
      values && values->is_object() ? values->get_object().if_contains("outputs") : nullptr;
  if (!outputs || !outputs->is_object()) return {};
  return sensitive_mapped_outputs(outputs->get_object(), allowlist);
}

// The OpenTofu outputs the Capsule maps: only their values may be shown.
std::set<std::string> mapped_output_names(const std::map<std::string, protocol::OutputMapping>& allowlist) {
  std::set<std::string> names;
  for (const auto& [public_name, mapping] : allowlist) names.insert(mapping.from);
  return names;
}

}  // namespace

Result<PlanReview> review_plan(const boost::json::object& plan, bool tofu_changed,
                               const std::map<std::string, protocol::OutputMapping>& allowlist,
                               const std::vector<std::string>& data_loss_patterns,
                               const redaction::SecretSet& secrets) {
  auto analysis = analyze_plan(plan);
  if (!analysis) return std::unexpected(analysis.error());
  PlanReview review;
  review.has_changes = analysis->has_changes || tofu_changed;
  if (review.has_changes) review.sealed_values = redaction::plan_secret_values(plan);
  for (auto& name : planned_sensitive_outputs(plan, allowlist))
    review.refused_outputs.push_back(
        protocol::RefusedOutput{std::move(name), std::string(protocol::kSensitiveOutputReason)});
  review.view = build_plan_view(plan, mapped_output_names(allowlist), &secrets);
  review.data_loss = mark_data_loss(analysis->resource_changes, data_loss_patterns, analysis->action_reasons);
  review.analysis = std::move(*analysis);
  return review;
}

std::vector<std::string> sealed_plan_lines(const protocol::PlanView& view, bool has_changes,
                                           const std::string& plan_digest) {
  if (!has_changes) return {"takosumi: the plan as sealed: no changes; nothing to apply"};
  std::vector<std::string> lines{"takosumi: the plan as sealed (plan digest sha256:" + plan_digest +
                                     "), which an apply of this Run runs:",
                                 ""};
  for (auto& line : protocol::plan_view_lines(view, {.max_lines = kMaxPlanLogLines}))
    lines.push_back(std::move(line));
  lines.push_back("takosumi: end of the plan as sealed");
  return lines;
}

Result<DriftReview> review_drift(const boost::json::object& plan, const redaction::SecretSet& secrets) {
  auto drift = analyze_drift(plan);
  if (!drift) return std::unexpected(drift.error());
  DriftReview review;
  for (const auto& r : drift->resources)
    review.log_lines.push_back("takosumi: " + protocol::one_line("drift: " + r.address + " (" + r.action + ")"));
  auto text = protocol::plan_view_lines(build_drift_view(plan, &secrets),
                                        {.max_lines = kMaxPlanLogLines, .drift = true});
  if (!text.empty()) {
    review.log_lines.push_back("takosumi: what changed outside OpenTofu, from the refresh-only plan:");
    for (auto& line : text) review.log_lines.push_back(std::move(line));
    review.log_lines.push_back("takosumi: end of what changed outside OpenTofu");
  }
  review.report = std::move(*drift);
  return review;
}

}  // namespace takosumi::runner
