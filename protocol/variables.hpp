#pragma once
// A Capsule's variables: any JSON value per OpenTofu variable name (string, number, bool, list,
// map, object or null), as the public API takes them, the store keeps them, the signed manifest
// carries them and the runner hands them to tofu in <module>/takosumi.auto.tfvars.json (never on
// the command line). OpenTofu converts each to the variable's declared type, so a string still
// works for a number or bool variable as it always did.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::protocol {

using Variables = std::map<std::string, boost::json::value>;

inline constexpr std::size_t kMaxVariables = 256;
inline constexpr std::size_t kMaxVariableBytes = 64 * 1024;  // one value, serialized
// All of a Run's variables, serialized: half of the signed manifest's 1 MiB payload, so the
// manifest (and the claim answer that carries it base64-encoded) always fits what an agent reads.
inline constexpr std::size_t kMaxRunVariablesBytes = 512 * 1024;

// OpenTofu identifiers (variables, outputs): letter or underscore, then letters, digits, _ and -.
bool is_tofu_identifier(std::string_view s);

// invalid_argument naming the variable: more than 256 of them, a name OpenTofu cannot declare, or
// a value longer than 64 KiB serialized.
Result<Variables> variables_from_json(const boost::json::object& o);
boost::json::object to_json(const Variables& variables);

}  // namespace takosumi::protocol
