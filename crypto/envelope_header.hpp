#pragma once
// Internal to crypto/: the envelope header's canonical JSON and the reader's expectation check.
// Canonical means fixed key order and no whitespace, so the bytes used as AAD are a function of
// the header's values; the parser refuses any other spelling of the same values.
#include <cstddef>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "crypto/envelope.hpp"

namespace takosumi::crypto::detail {

inline constexpr std::size_t kMaxHeaderBytes = 16 * 1024;

std::string header_to_json(const EnvelopeHeader& header);
// Errors: envelope_malformed, naming the offending field.
Result<EnvelopeHeader> header_from_json(std::string_view json);
// Errors: envelope_header_mismatch, naming the field and both values.
Status check_expectation(const EnvelopeHeader& header, const EnvelopeExpectation& expect);

}  // namespace takosumi::crypto::detail
