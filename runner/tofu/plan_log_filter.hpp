#pragma once
// Withholds tofu plan's own description of the plan from the Run's log: from the first line that
// starts it ("OpenTofu used the selected providers…", "OpenTofu will perform the following
// actions:", "Note: Objects have changed outside of OpenTofu", "Changes to Outputs:", "No
// changes.", "Plan: …", a "  # <address> …" header) to the end of the command. tofu prints it
// before the plan file is known to be the one sealed — a module can replace that file while tofu
// writes it — so the log shows instead what the agent renders from the frozen plan
// (runner/plan/plan_render.hpp). Nothing comes back after it starts, not even tofu's "Saved the
// plan to:": any process of the Run can write to tofu's stdout, and a line it chose must not
// reopen the log in the middle of a description it wrote. Progress before it and diagnostics
// ("╷ │ ╵" boxes, "Warning:", "Error:") pass. One filter per `tofu plan`, on its stdout and stderr
// both.
#include <string_view>

#include "redaction/log_sink.hpp"

namespace takosumi::runner {

inline constexpr std::string_view kPlanWithheldNotice =
    "takosumi: tofu's own description of the plan is not shown; the plan as sealed (the one an "
    "apply runs) follows once tofu has exited";

class PlanLogFilter {
 public:
  explicit PlanLogFilter(redaction::LogSink next) : next_(std::move(next)) {}
  void operator()(std::string_view line);

 private:
  redaction::LogSink next_;
  bool withholding_ = false;
};

}  // namespace takosumi::runner
