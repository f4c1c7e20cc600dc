#pragma once
// The one type check of an Output against its mapping (outputAllowlist.type), shared by the
// runner, which publishes Outputs, and the control plane, which re-checks them: both refuse an
// unknown type the same way instead of one failing and the other dropping the Output.
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::protocol {

// "string", "number", "bool" or "any".
bool is_output_type(std::string_view type);

// What value is, in the words of the mapping types ("string", "number", "bool", "list",
// "object", "null"), for messages that name a mismatch without showing the value.
std::string output_kind(const boost::json::value& value);

// Whether value has type. An unknown type is invalid_argument naming it and the known ones, so
// the mapping can be fixed; it is never treated as a mismatch (which would hide the Output).
Result<bool> output_type_matches(const boost::json::value& value, std::string_view type);

}  // namespace takosumi::protocol
