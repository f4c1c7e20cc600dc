#pragma once
// Opaque cursors for paged lists: a position (e.g. a generation) bound to the list it belongs to
// (e.g. a Capsule id), as URL-safe base64 without padding, so it can go into a query string as is.
// Clients pass `nextCursor` back unchanged; anything else is invalid_argument. No I/O.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "controlplane/http/http_types.hpp"

namespace takosumi::controlplane {

std::string encode_cursor(std::string_view list, std::int64_t position);
Result<std::int64_t> decode_cursor(std::string_view cursor, std::string_view list);
// The request's `cursor` query parameter decoded for `list`; nullopt when there is none (the
// first page).
Result<std::optional<std::int64_t>> query_cursor(const HttpRequest& req, std::string_view list);

}  // namespace takosumi::controlplane
