#pragma once
// Finds the values OpenTofu marks sensitive in its JSON documents and adds them to a SecretSet, so
// that they are redacted wherever they appear afterwards (OpenTofu itself prints some of them, e.g.
// in the "output" of a terraform_data whose "input" is sensitive). Adds every string leaf of a
// sensitive subtree, and numbers whose text is at least kMinRedactedLength long; SecretSet::add
// refuses shorter strings. Unexpected shapes are skipped, never an error: collection is best
// effort on top of tofu's own "(sensitive value)" masking.
#include <boost/json/value.hpp>

#include <vector>

#include "common/secret_bytes.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::redaction {

// `tofu show -json <planfile>`: sensitive root variables (by configuration.root_module.variables),
// resource_changes and resource_drift before/after at the *_sensitive paths, output_changes marked
// sensitive, and prior_state / planned_values (sensitive outputs, resources' sensitive_values,
// child modules included).
void collect_plan_secrets(const boost::json::value& plan, SecretSet& into);
// The same values as a list (in the order found, each once, none shorter than kMinRedactedLength),
// to seal with the plan so that its apply knows them without reading the plan JSON again
// (runner/state/plan_contents.hpp).
std::vector<SecretBytes> plan_secret_values(const boost::json::value& plan);

// A raw state file (format version 4): sensitive outputs and every resource instance's attributes
// at the paths in its sensitive_attributes.
void collect_state_secrets(const boost::json::value& state, SecretSet& into);

// `tofu output -json`: {name: {"sensitive": bool, "type": ..., "value": ...}}.
void collect_output_secrets(const boost::json::value& outputs, SecretSet& into);

}  // namespace takosumi::redaction
