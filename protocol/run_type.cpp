#include "protocol/run_type.hpp"

namespace takosumi::protocol {

std::string_view to_string(RunType t) {
  switch (t) {
    case RunType::plan: return "plan";
    case RunType::apply: return "apply";
  }
  return "plan";
}

std::optional<RunType> run_type_from_string(std::string_view s) {
  if (s == "plan") return RunType::plan;
  if (s == "apply") return RunType::apply;
  return std::nullopt;
}

}  // namespace takosumi::protocol
