#include "runner/tofu/plan_log_filter.hpp"

#include <array>

namespace takosumi::runner {
namespace {

constexpr std::array<std::string_view, 7> kStarts{
    "OpenTofu used the selected providers to generate the following execution",
    "OpenTofu will perform the following actions:",
    "Note: Objects have changed outside of OpenTofu",
    "Changes to Outputs:",
    "No changes.",
    "Plan: ",
    "  # "};

bool starts_description(std::string_view line) {
  for (auto s : kStarts)
    if (line.starts_with(s)) return true;
  return false;
}

// tofu's diagnostics are boxed at the start of the line; nothing of a plan's diff is.
bool is_diagnostic(std::string_view line) {
  return line.starts_with("\u2577") || line.starts_with("\u2502") || line.starts_with("\u2575") ||
         line.starts_with("Warning: ") || line.starts_with("Error: ");
}

}  // namespace

void PlanLogFilter::operator()(std::string_view line) {
  if (!next_) return;
  if (!withholding_ && starts_description(line)) {
    withholding_ = true;
    next_(kPlanWithheldNotice);
    return;
  }
  if (withholding_ && !is_diagnostic(line)) return;
  next_(line);
}

}  // namespace takosumi::runner
