#pragma once
// Pieces of `tofu show -json <planfile>` shared by the plan and drift readers. Internal to the
// runner. Errors are opentofu_failed.
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json_fields.hpp"

namespace takosumi::runner {

inline constexpr std::size_t kMaxPlanJson = 64 * 1024 * 1024;

// Accepts format_version major 1 ("1", "1.x"); unknown keys are the caller's to ignore.
Status check_plan_format(const boost::json::object& doc);

// The "actions" of a change object (resource_changes[].change, resource_drift[].change,
// output_changes.NAME).
Result<std::vector<std::string>> plan_actions_of(const boost::json::object& change);

// True for an action list that changes nothing: only "no-op" and "read".
bool changes_nothing(const std::vector<std::string>& actions);

}  // namespace takosumi::runner
