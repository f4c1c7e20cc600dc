#pragma once
// Reads a JSON-syntax OpenTofu file (.tf.json, .tofu.json) into the shape the native syntax gives
// (config_body.hpp). JSON has no block syntax, so the blocks the policy scan reads are known by
// name: terraform { required_providers }, resource/data/ephemeral/removed { provisioner },
// module, provider, check { data }, import. Every level may be an object or an array of objects,
// as OpenTofu accepts both. Lines are those of the keys that name a block or attribute.
#include <string_view>

#include "common/error.hpp"
#include "runner/policy/config_body.hpp"

namespace takosumi::runner {

// Errors are invalid_argument, "line N: <what>": invalid JSON, nesting deeper than 64, a key
// that appears twice in one object (OpenTofu reads both, a JSON library keeps one), a block
// that is not an object.
Result<ConfigBody> parse_tf_json(std::string_view text);

}  // namespace takosumi::runner
