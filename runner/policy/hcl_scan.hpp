#pragma once
// Reads the block structure of a native-syntax OpenTofu file (.tf, .tofu) without evaluating
// anything. Attribute values are summarised (config_body.hpp); nothing inside an expression can
// open a block, so provisioner "x" { in a string, heredoc or comment is text, as for OpenTofu.
// The parser is lenient where leniency cannot hide a block (two attributes on one line);
// anything it cannot follow is an error, and the caller treats the module as not fully scanned.
#include <string_view>

#include "common/error.hpp"
#include "runner/policy/config_body.hpp"

namespace takosumi::runner {

// Errors are invalid_argument, "line N: <what>".
Result<ConfigBody> parse_hcl(std::string_view text);

}  // namespace takosumi::runner
