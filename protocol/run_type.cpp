#include "protocol/run_type.hpp"

namespace takosumi::protocol {

std::string_view to_string(RunType t) {
  switch (t) {
    case RunType::plan: return "plan";
    case RunType::apply: return "apply";
    case RunType::destroy_plan: return "destroy_plan";
    case RunType::drift_check: return "drift_check";
  }
  return "plan";
}

std::optional<RunType> run_type_from_string(std::string_view s) {
  for (auto t : {RunType::plan, RunType::apply, RunType::destroy_plan, RunType::drift_check})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

}  // namespace takosumi::protocol
