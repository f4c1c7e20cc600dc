#pragma once
// JSON documents of a Run that hold plaintext sensitive values (a state, `tofu show -json`),
// parsed in memory only as long as it takes to collect those values. Blocking (large JSON): call
// on the thread pool.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "common/error.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::runner {

// opentofu_failed when text is not JSON; `what` names the document in the message.
Result<boost::json::value> parse_json_document(std::string_view text, std::string_view what);

// A state file (the prior one, or the one an apply left) read up to max_bytes (a
// state_read_limit of limits.maxStateBytes), parsed; its sensitive values join `secrets`.
// Errors: payload_too_large past max_bytes, io_error, opentofu_failed (not JSON),
// state_integrity_failed (not an object).
Result<boost::json::object> read_state_document(const std::filesystem::path& state, std::string_view what,
                                                std::uint64_t max_bytes, redaction::SecretSet& secrets);

}  // namespace takosumi::runner
