#include "confine/command_frames.hpp"

#include <charconv>

namespace takosumi::confine {
namespace {

void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool put_string(std::string& out, const std::string& s) {
  if (s.find('\0') != std::string::npos) return false;
  out += s;
  out.push_back('\0');
  return true;
}

// The next NUL-terminated string of payload from pos on.
std::expected<std::string, std::string> take(std::string_view payload, std::size_t& pos) {
  const auto end = payload.find('\0', pos);
  if (end == std::string_view::npos) return std::unexpected("a request ends inside a string");
  std::string s(payload.substr(pos, end - pos));
  pos = end + 1;
  return s;
}

std::expected<std::size_t, std::string> take_count(std::string_view payload, std::size_t& pos) {
  auto text = take(payload, pos);
  if (!text) return std::unexpected(text.error());
  std::size_t n = 0;
  const auto [rest, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (text->empty() || ec != std::errc() || rest != text->data() + text->size() || n > kMaxRequestBytes)
    return std::unexpected("a request holds a malformed count");
  return n;
}

}  // namespace

std::expected<std::string, std::string> encode_request(const CommandRequest& request) {
  std::string body;
  bool ok = put_string(body, request.cwd) && put_string(body, request.capture ? "1" : "0") &&
            put_string(body, std::to_string(request.argv.size()));
  for (const auto& a : request.argv) ok = ok && put_string(body, a);
  ok = ok && put_string(body, std::to_string(request.env.size()));
  for (const auto& e : request.env) ok = ok && put_string(body, e);
  if (!ok) return std::unexpected("a command's argument or environment holds a NUL byte");
  if (body.size() > kMaxRequestBytes)
    return std::unexpected("a command's arguments and environment are larger than " +
                           std::to_string(kMaxRequestBytes) + " bytes");
  std::string out;
  put_u32(out, static_cast<std::uint32_t>(body.size()));
  return out + body;
}

std::expected<CommandRequest, std::string> decode_request(std::string_view payload) {
  CommandRequest request;
  std::size_t pos = 0;
  auto cwd = take(payload, pos);
  if (!cwd) return std::unexpected(cwd.error());
  request.cwd = std::move(*cwd);
  auto capture = take(payload, pos);
  if (!capture) return std::unexpected(capture.error());
  if (*capture != "0" && *capture != "1") return std::unexpected("a request's capture is neither 0 nor 1");
  request.capture = *capture == "1";
  for (auto* list : {&request.argv, &request.env}) {
    auto n = take_count(payload, pos);
    if (!n) return std::unexpected(n.error());
    for (std::size_t i = 0; i < *n; ++i) {
      auto s = take(payload, pos);
      if (!s) return std::unexpected(s.error());
      list->push_back(std::move(*s));
    }
  }
  if (pos != payload.size()) return std::unexpected("a request has bytes after its environment");
  if (request.argv.empty() || !request.argv.front().starts_with('/'))
    return std::unexpected("a request's program must be an absolute path");
  if (!request.cwd.starts_with('/')) return std::unexpected("a request's working directory must be absolute");
  return request;
}

std::string frame_header(FrameType type, std::uint32_t length) {
  std::string out(1, static_cast<char>(type));
  put_u32(out, length);
  return out;
}

std::uint32_t read_u32(const unsigned char* bytes) {
  return static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
         static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
}

std::string exit_payload(bool signalled, int value) {
  return (signalled ? "S" : "E") + std::to_string(value);
}

std::expected<CommandEnd, std::string> parse_exit_payload(std::string_view payload) {
  if (payload.size() < 2 || (payload[0] != 'E' && payload[0] != 'S'))
    return std::unexpected("a malformed exit frame");
  CommandEnd end{payload[0] == 'S', 0};
  const auto [rest, ec] = std::from_chars(payload.data() + 1, payload.data() + payload.size(), end.value);
  if (ec != std::errc() || rest != payload.data() + payload.size() || end.value < 0 || end.value > 255)
    return std::unexpected("a malformed exit frame");
  return end;
}

}  // namespace takosumi::confine
