#pragma once
// Names under which secrets reach a Run: Connection variable names (environment variables, or
// for file credentials the variable that holds the file's path) and sensitive variable names.
// Checked by the control plane when a user sends them and again by the agent when it unseals
// them: the agent never lets a Connection replace a variable the runner itself sets.
#include <string_view>

#include "common/error.hpp"

namespace takosumi::protocol {

// ^[A-Z_][A-Z0-9_]*$, at most 128 bytes, and not reserved (PATH, HOME, TMPDIR, proxies,
// SSL_CERT_*, TF_*, TAKOSUMI_*, OPENTOFU_*, LD_*, …). Errors are invalid_argument and say why.
Status validate_credential_name(std::string_view name);
bool is_reserved_credential_name(std::string_view name);

// OpenTofu input variable names: ^[A-Za-z_][A-Za-z0-9_-]*$, at most 128 bytes.
bool is_valid_variable_name(std::string_view name);

}  // namespace takosumi::protocol
