#pragma once
// The plan view (protocol/plan_view.hpp) of a `tofu show -json` document of the frozen plan:
// resource_changes and output_changes that change something, each attribute that differs
// (runner/plan/attribute_changes.hpp). Redacted here, before anything leaves the agent: a value
// that holds one of the Run's secrets (any form SecretSet knows) or is shaped like a credential
// becomes kSensitiveValue, like one tofu marks sensitive; addresses and paths (for_each keys, map
// keys are the module's to choose) go through the same redaction as the log. Pure functions.
#include <boost/json/object.hpp>

#include <cstddef>
#include <set>
#include <string>

#include "protocol/plan_view.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::runner {

struct PlanViewLimits {
  // Past this (serialised), further resources are counted in resourcesOmitted and further
  // Outputs are named with their values withheld.
  std::size_t max_bytes = protocol::kMaxPlanViewBytes - (1u << 20);
  std::size_t max_attributes_per_resource = 500;
  // A longer value is cut (at a UTF-8 boundary) and ends "… (N bytes)".
  std::size_t max_value_bytes = 4096;
};

// mapped_outputs: the OpenTofu output names the Capsule's allowlist maps (`from`); only their
// values are shown. secrets may be null (nothing but credential shapes is then withheld). The
// view's run id, plan digest and summary are the caller's to fill in.
protocol::PlanView build_plan_view(const boost::json::object& plan,
                                   const std::set<std::string>& mapped_outputs,
                                   const redaction::SecretSet* secrets,
                                   const PlanViewLimits& limits = {});

// A refresh-only plan's resource_drift as a view's resources (every entry: what changed or
// vanished outside OpenTofu, a vanished one with actions ["delete"]); no Outputs.
protocol::PlanView build_drift_view(const boost::json::object& plan,
                                    const redaction::SecretSet* secrets,
                                    const PlanViewLimits& limits = {});

}  // namespace takosumi::runner
