#pragma once
// Reads a refresh-only plan (`tofu show -json` of `plan -refresh-only`) into a drift report:
// which resources' real objects differ from the stored state, by attribute NAME only. No value
// of the plan ever reaches the report.
#include <string_view>

#include "common/error.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::runner {

// Named instead of attributes when the real object is gone (a "delete" drift): every attribute
// "differs", and listing them all would say nothing more.
inline constexpr std::string_view kDeletedAttributes = "(deleted)";

// status "drift" iff resource_drift has an entry whose actions are not only no-op/read;
// "no_drift" otherwise (output_changes are ignored: an output expression that changed in the
// module is not drift of the real objects). Each resource: address, type, actions joined with
// "," (e.g. "update", "delete"), sorted top-level attribute names whose before/after values
// differ (an attribute unknown after refresh counts as differing; sensitive ones are named too).
// Errors: opentofu_failed when the text is not a plan document of format_version 1.x.
Result<protocol::DriftReport> analyze_drift(std::string_view show_json);
Result<protocol::DriftReport> analyze_drift(const boost::json::object& show_json);

}  // namespace takosumi::runner
