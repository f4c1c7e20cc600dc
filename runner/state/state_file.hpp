#pragma once
// Reads the identity of an OpenTofu state file (JSON format version 4): serial and lineage, and
// whether it holds anything at all.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "common/error.hpp"
#include "config/state_limit.hpp"

namespace takosumi::runner {

// The local backend's state file in the module directory, and the file tofu writes instead when
// it could not persist its final state there.
inline constexpr const char* kStateFile = "terraform.tfstate";
inline constexpr const char* kErroredStateFile = "errored.tfstate";

struct StateIdentity {
  std::int64_t serial = 0;
  std::string lineage;
  // No resources and no outputs, e.g. after a destroy plan was applied. Still a StateVersion.
  bool empty = false;
};

// How many bytes of a state may be read when limits.maxStateBytes is max_state_bytes. A higher
// limit than the default is honoured as it is; a lower one still lets the default's worth be read,
// because a new state over the limit is stored all the same (the Run then fails with
// limit_exceeded, docs/configuration.md) and must be read to be stored.
constexpr std::uint64_t state_read_limit(std::uint64_t max_state_bytes) {
  return std::max(max_state_bytes, config::kDefaultMaxStateBytes);
}

// Errors: io_error/not_found reading, payload_too_large past max_bytes (a state_read_limit),
// state_integrity_failed when the text is not a version 4 state.
Result<StateIdentity> read_state_identity(const std::filesystem::path& path, std::uint64_t max_bytes);
Result<StateIdentity> parse_state_identity(std::string_view text, std::uint64_t max_bytes);
Result<StateIdentity> state_identity(const boost::json::object& state);

// The root module's outputs of a state, in the shape of `tofu output -json`: name → {sensitive,
// type, value}. OpenTofu writes "sensitive" into the state only when true; here it is always
// there. Reading them from the state spares a tofu command after the apply, and that command
// would read the module's configuration files again (an apply may have written them).
boost::json::object state_outputs(const boost::json::object& state);

}  // namespace takosumi::runner
