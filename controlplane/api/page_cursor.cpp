#include "controlplane/api/page_cursor.hpp"

#include <algorithm>
#include <charconv>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kVersion = "c1:";
constexpr std::size_t kMaxCursor = 512;

std::unexpected<Error> invalid(std::string_view list) {
  return fail(errc::kInvalidArgument,
              "cursor is not a cursor of " + std::string(list) +
                  "; pass the nextCursor of the previous page unchanged, or omit it for the first page");
}

}  // namespace

std::string encode_cursor(std::string_view list, std::int64_t position) {
  std::string text = base64_encode(std::string(kVersion) + std::string(list) + ":" +
                                   std::to_string(position));
  std::ranges::replace(text, '+', '-');
  std::ranges::replace(text, '/', '_');
  while (!text.empty() && text.back() == '=') text.pop_back();
  return text;
}

Result<std::int64_t> decode_cursor(std::string_view cursor, std::string_view list) {
  if (cursor.size() > kMaxCursor ||
      cursor.find_first_of("+/=") != std::string_view::npos)
    return invalid(list);
  std::string text(cursor);
  std::ranges::replace(text, '-', '+');
  std::ranges::replace(text, '_', '/');
  text.append((4 - text.size() % 4) % 4, '=');
  auto bytes = base64_decode(text);
  if (!bytes) return invalid(list);
  const std::string_view payload = as_chars(*bytes);
  const std::string prefix = std::string(kVersion) + std::string(list) + ":";
  if (!payload.starts_with(prefix)) return invalid(list);
  const auto digits = payload.substr(prefix.size());
  std::int64_t position = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), position);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) return invalid(list);
  return position;
}

Result<std::optional<std::int64_t>> query_cursor(const HttpRequest& req, std::string_view list) {
  auto it = req.query.find("cursor");
  if (it == req.query.end() || it->second.empty()) return std::optional<std::int64_t>{};
  auto position = decode_cursor(it->second, list);
  if (!position) return std::unexpected(position.error());
  return std::optional<std::int64_t>(*position);
}

}  // namespace takosumi::controlplane
