#pragma once
// The plan a reviewer reads, rendered from `tofu show -json` of the frozen plan: the bytes that
// are sealed, whose digest the apply checks, and that the apply runs. Never from what tofu printed
// while it planned — a module can replace the plan file under tofu while tofu writes it, and the
// text tofu printed would then describe another plan than the one applied.
//
// One resource per paragraph: a header naming the address and what happens to it, then each
// attribute that differs (runner/plan/attribute_changes.hpp). Values are one-line JSON, sensitive
// ones kSensitive, unknown ones kUnknown. An Output's values are shown only when the Capsule maps
// it (its allowlist's `from`) and the module does not mark it sensitive: tofu prints every
// Output, but only mapped ones may be published. Drift (a refresh-only plan's resource_drift) is
// rendered the same way. Pure functions.
#include <boost/json/object.hpp>

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace takosumi::runner {

struct PlanRenderLimits {
  std::size_t max_lines = 5000;              // past this, one line says how much was left out
  std::size_t max_attributes_per_resource = 500;
};

// The resource_changes and output_changes of a plan (normal or destroy); `mapped_outputs` are the
// OpenTofu output names the Capsule's allowlist maps.
std::vector<std::string> render_plan(const boost::json::object& plan,
                                     const std::set<std::string>& mapped_outputs,
                                     const PlanRenderLimits& limits = {});

// Values and paths arrive JSON-escaped, but an address carries its for_each key as the module
// wrote it: a control character (a newline above all) would let one line of the plan print what
// looks like several, or steer the reader's terminal. Each becomes a visible \u escape; every
// rendered line passes through this.
std::string one_line(std::string_view line);

// The resource_drift of a refresh-only plan: what changed outside OpenTofu.
std::vector<std::string> render_drift(const boost::json::object& plan,
                                      const PlanRenderLimits& limits = {});

}  // namespace takosumi::runner
