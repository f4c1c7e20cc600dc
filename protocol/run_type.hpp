#pragma once
#include <optional>
#include <string_view>

namespace takosumi::protocol {

// The kinds of Run the agent executes. Refresh is deliberately not one (the seed).
enum class RunType { plan, apply };

std::string_view to_string(RunType t);
std::optional<RunType> run_type_from_string(std::string_view s);

}  // namespace takosumi::protocol
