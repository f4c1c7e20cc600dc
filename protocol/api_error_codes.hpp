#pragma once
// Stable error codes of the control plane's own API, beside common/error_codes.hpp. Part of the
// public API like those (HTTP error bodies, Run failure codes): never rename one.
#include <string_view>

#include "protocol/failure_codes.hpp"

namespace takosumi::api_errc {

// 409: the plan marks data-bearing resources for delete/replace and the apply request did not
// send {"acceptDataLoss": true}.
inline constexpr std::string_view kDataLossNotAccepted = "data_loss_not_accepted";
// 409: the operation needs a StateVersion (drift check, destroy) and the Capsule has none.
inline constexpr std::string_view kNoStateVersion = "no_state_version";
// 431: the request's header section is larger than the server reads (16 KiB).
inline constexpr std::string_view kHeadersTooLarge = "headers_too_large";
// 503: streaming this body to disk would pass the server's budget of temporary bytes
// (maxTempMiB, shared by all requests); retry later.
inline constexpr std::string_view kTempSpaceExhausted = "temp_space_exhausted";
}  // namespace takosumi::api_errc
