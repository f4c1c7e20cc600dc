#pragma once
// Reads the identity of an OpenTofu state file (JSON format version 4): serial and lineage, and
// whether it holds anything at all.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "common/error.hpp"

namespace takosumi::runner {

struct StateIdentity {
  std::int64_t serial = 0;
  std::string lineage;
  // No resources and no outputs, e.g. after a destroy plan was applied. Still a StateVersion.
  bool empty = false;
};

inline constexpr std::size_t kMaxStateBytes = 256 * 1024 * 1024;

// Errors: io_error/not_found reading, payload_too_large past kMaxStateBytes,
// state_integrity_failed when the text is not a version 4 state.
Result<StateIdentity> read_state_identity(const std::filesystem::path& path);
Result<StateIdentity> parse_state_identity(std::string_view text);
Result<StateIdentity> state_identity(const boost::json::object& state);

// The root module's outputs of a state, in the shape of `tofu output -json`: name → {sensitive,
// type, value}. OpenTofu writes "sensitive" into the state only when true; here it is always
// there. Reading them from the state spares a tofu command after the apply, and that command
// would read the module's configuration files again (an apply may have written them).
boost::json::object state_outputs(const boost::json::object& state);

}  // namespace takosumi::runner
