#pragma once
// Typed, validated access to fields of JSON received from the network. Every getter fails with
// a message naming the field, so a bad request gets an error that says what to fix.
#include <boost/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi {

namespace json = boost::json;

// Parses text bounded by max_bytes into a JSON object, strictly (strict_json.hpp): a duplicate
// key is invalid_argument naming it.
Result<json::object> parse_object(std::string_view text, std::size_t max_bytes);

// invalid_argument naming the first key of o that is not in known, prefixed with where ("source"
// → "unknown field \"source.rev\" (known: gitUrl, ref, modulePath)"). Every request body parser
// calls it with the list of the fields it reads, kept beside it, so a misspelt field is refused
// instead of silently ignored.
Status check_known_fields(const json::object& o, std::initializer_list<std::string_view> known,
                          std::string_view where = {});
// An entry of a JSON array that must be an object with only `known` fields; `entries` names the
// array's entries in the refusal ("dataLoss entries must be objects").
Result<const json::object*> entry_object(const json::value& v, std::string_view entries,
                                         std::initializer_list<std::string_view> known);

Result<std::string> get_string(const json::object& o, std::string_view key,
                               std::size_t max_len = 4096);
Result<std::optional<std::string>> get_optional_string(const json::object& o,
                                                       std::string_view key,
                                                       std::size_t max_len = 4096);
Result<std::int64_t> get_int(const json::object& o, std::string_view key);
Result<std::optional<std::int64_t>> get_optional_int(const json::object& o, std::string_view key);
// A time: RFC 3339 text as every answer gives it ("2026-12-03T17:04:05Z", common/clock.hpp), or
// seconds since the epoch as documents written before that hold. Returns seconds since the epoch.
Result<std::optional<std::int64_t>> get_optional_time(const json::object& o, std::string_view key);
Result<std::int64_t> get_time(const json::object& o, std::string_view key);
Result<bool> get_bool_or(const json::object& o, std::string_view key, bool fallback);
Result<const json::object*> get_object(const json::object& o, std::string_view key);
// Missing key → nullptr; present but not an object → error.
Result<const json::object*> get_optional_object(const json::object& o, std::string_view key);
Result<const json::array*> get_optional_array(const json::object& o, std::string_view key);

// Reads the optional object field `key` with `parse` (const json::object& → Result<T>) into
// `out`; an absent field leaves `out` as it is. Errors are returned as `parse` wrote them.
template <class Parse, class T>
Status read_optional_object(const json::object& o, std::string_view key, Parse&& parse, T& out) {
  auto field = get_optional_object(o, key);
  if (!field) return std::unexpected(field.error());
  if (!*field) return {};
  auto parsed = parse(**field);
  if (!parsed) return std::unexpected(parsed.error());
  out = std::move(*parsed);
  return {};
}

std::string serialize(const json::value& v);

}  // namespace takosumi
