#pragma once
// Turns `tofu output -json` into the Capsule's public Outputs: only allowlisted names, never a
// sensitive value, types checked against the mapping.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "protocol/job_manifest.hpp"

namespace takosumi::runner {

struct FilteredOutputs {
  boost::json::object outputs;  // public name → value
  // One line per mapped output left out because OpenTofu marks it sensitive (names only).
  std::vector<std::string> warnings;
  // The public names of those outputs, reported so the control plane can refuse to pass them on.
  std::vector<std::string> sensitive;
};

// Unmapped outputs never appear. A sensitive output is skipped even when mapped (and even when
// required): it is named in a warning, its value never leaves this function. Errors:
// output_required_missing (a required mapping has no value), output_type_mismatch,
// manifest_invalid (unknown mapping type), opentofu_failed (text is not an output document).
Result<FilteredOutputs> filter_outputs(
    std::string_view output_json,
    const std::map<std::string, protocol::OutputMapping>& allowlist);

// The public names of mapped outputs that OpenTofu marks sensitive in `outputs` (name → {sensitive,
// value}: a plan's planned_values.outputs, whose values may still be unknown). A plan reports them,
// so the control plane refuses a Dependency or OutputShare of them before anything was applied.
std::vector<std::string> sensitive_mapped_outputs(
    const boost::json::object& outputs,
    const std::map<std::string, protocol::OutputMapping>& allowlist);

}  // namespace takosumi::runner
