#include "common/json_fields.hpp"

#include <algorithm>
#include <type_traits>

#include "common/clock.hpp"
#include "common/error_codes.hpp"
#include "common/strict_json.hpp"

namespace takosumi {
namespace {

std::string field_name(std::string_view key) { return "field \"" + std::string(key) + "\""; }

// The field `key` as `as` sees it (a pointer to the object or array in it); nullptr when the field
// is absent or null, a refusal naming the field when it holds another kind of value.
template <class As, class Ptr = std::invoke_result_t<As, const json::value&>>
Result<Ptr> optional_field(const json::object& o, std::string_view key, std::string_view kind,
                           As as) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return Ptr{nullptr};
  Ptr found = as(it->value());
  if (found == nullptr)
    return fail(errc::kInvalidArgument, field_name(key) + " must be " + std::string(kind));
  return found;
}

}  // namespace

Result<json::object> parse_object(std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes)
    return fail(errc::kPayloadTooLarge,
                "JSON body of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                    std::to_string(max_bytes));
  auto v = parse_json_strict(text);
  if (!v) return std::unexpected(v.error());
  if (!v->is_object()) return fail(errc::kInvalidArgument, "JSON body must be an object");
  return std::move(v->as_object());
}

Status check_known_fields(const json::object& o, std::initializer_list<std::string_view> known,
                          std::string_view where) {
  for (const auto& kv : o) {
    const std::string_view key(kv.key().data(), kv.key().size());
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    const std::string shown(key.substr(0, 128));
    const std::string name = where.empty() ? shown : std::string(where) + "." + shown;
    return fail(errc::kInvalidArgument, "unknown field \"" + name + "\" (known: " +
                                            (list.empty() ? "none" : list) + ")");
  }
  return {};
}

Result<std::optional<std::string>> get_optional_string(const json::object& o,
                                                       std::string_view key,
                                                       std::size_t max_len) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return std::optional<std::string>{};
  if (!it->value().is_string())
    return fail(errc::kInvalidArgument, field_name(key) + " must be a string");
  const auto& s = it->value().get_string();
  if (s.size() > max_len)
    return fail(errc::kInvalidArgument,
                field_name(key) + " is longer than " + std::to_string(max_len) + " characters");
  return std::optional<std::string>(std::string(s));
}

Result<std::string> get_string(const json::object& o, std::string_view key, std::size_t max_len) {
  auto r = get_optional_string(o, key, max_len);
  if (!r) return std::unexpected(r.error());
  if (!*r) return fail(errc::kInvalidArgument, field_name(key) + " is required");
  return std::move(**r);
}

Result<std::optional<std::int64_t>> get_optional_int(const json::object& o,
                                                     std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return std::optional<std::int64_t>{};
  const auto& v = it->value();
  if (v.is_int64()) return std::optional<std::int64_t>(v.get_int64());
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return std::optional<std::int64_t>(static_cast<std::int64_t>(v.get_uint64()));
  return fail(errc::kInvalidArgument, field_name(key) + " must be an integer");
}

Result<std::optional<std::int64_t>> get_optional_time(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return std::optional<std::int64_t>{};
  if (const auto* text = it->value().if_string()) {
    if (auto t = parse_utc_timestamp(*text)) return std::optional<std::int64_t>(*t);
    return fail(errc::kInvalidArgument,
                field_name(key) + " must be an RFC 3339 time such as \"2026-12-03T17:04:05Z\"");
  }
  // Seconds since the epoch, as before RFC 3339 (old backups), within the years it can write.
  auto seconds = get_optional_int(o, key);
  if (!seconds || (*seconds && (**seconds < kMinUnixTime || **seconds > kMaxUnixTime)))
    return fail(errc::kInvalidArgument, field_name(key) +
                                            " must be an RFC 3339 time such as \"2026-12-03T17:04:05Z\"");
  return seconds;
}

Result<std::int64_t> get_time(const json::object& o, std::string_view key) {
  auto r = get_optional_time(o, key);
  if (!r) return std::unexpected(r.error());
  if (!*r) return fail(errc::kInvalidArgument, field_name(key) + " is required");
  return **r;
}

Result<std::int64_t> get_int(const json::object& o, std::string_view key) {
  auto r = get_optional_int(o, key);
  if (!r) return std::unexpected(r.error());
  if (!*r) return fail(errc::kInvalidArgument, field_name(key) + " is required");
  return **r;
}

Result<bool> get_bool_or(const json::object& o, std::string_view key, bool fallback) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return fallback;
  if (!it->value().is_bool())
    return fail(errc::kInvalidArgument, field_name(key) + " must be true or false");
  return it->value().get_bool();
}

Result<const json::object*> entry_object(const json::value& v, std::string_view entries,
                                         std::initializer_list<std::string_view> known) {
  if (!v.is_object())
    return fail(errc::kInvalidArgument, std::string(entries) + " must be objects");
  TAKOSUMI_TRY(check_known_fields(v.get_object(), known));
  return &v.get_object();
}

Result<const json::object*> get_optional_object(const json::object& o, std::string_view key) {
  return optional_field(o, key, "an object", [](const json::value& v) { return v.if_object(); });
}

Result<const json::object*> get_object(const json::object& o, std::string_view key) {
  auto r = get_optional_object(o, key);
  if (!r) return r;
  if (!*r) return fail(errc::kInvalidArgument, field_name(key) + " is required");
  return r;
}

Result<const json::array*> get_optional_array(const json::object& o, std::string_view key) {
  return optional_field(o, key, "an array", [](const json::value& v) { return v.if_array(); });
}

std::string serialize(const json::value& v) { return json::serialize(v); }

}  // namespace takosumi
