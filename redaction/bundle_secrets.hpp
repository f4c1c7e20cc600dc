#pragma once
// The values of a Run's secret bundle — its Connections' values, its sensitive variables, the
// source credential — added to the Run's SecretSet before anything of the Run runs, so no line the
// Run logs can show one.
#include <string>
#include <vector>

#include "protocol/secret_bundle.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::redaction {

// Returns, for the Run's log, one line per value too short to replace everywhere it occurs
// without destroying the log (shorter than kMinRedactedLength; docs/security.md), naming the
// value's place, never the value.
std::vector<std::string> collect_bundle_secrets(const protocol::SecretBundle& bundle, SecretSet& into);

}  // namespace takosumi::redaction
