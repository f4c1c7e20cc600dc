#pragma once
// Opaque cursors for paged lists: a position (e.g. a generation) bound to the list it belongs to
// (e.g. a Capsule id), as URL-safe base64 without padding, so it can go into a query string as is.
// Clients pass `nextCursor` back unchanged; anything else is invalid_argument. Pure.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::controlplane {

std::string encode_cursor(std::string_view list, std::int64_t position);
Result<std::int64_t> decode_cursor(std::string_view cursor, std::string_view list);

}  // namespace takosumi::controlplane
