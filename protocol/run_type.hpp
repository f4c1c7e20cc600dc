#pragma once
#include <optional>
#include <string_view>

namespace takosumi::protocol {

// The kinds of Run the agent executes. Refresh is deliberately not one (the seed); a rollback is
// an ordinary `plan` at an older commit, and a destroy's apply is an ordinary `apply`.
//   plan         tofu plan -out (saved, encrypted, uploaded)
//   destroy_plan tofu plan -destroy -out
//   apply        tofu apply <the saved plan named by digest>
//   drift_check  tofu plan -refresh-only -detailed-exitcode -lock=false: read-only, never uploads
enum class RunType { plan, apply, destroy_plan, drift_check };

std::string_view to_string(RunType t);
std::optional<RunType> run_type_from_string(std::string_view s);

}  // namespace takosumi::protocol
