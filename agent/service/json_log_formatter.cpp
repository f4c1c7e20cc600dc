#include "agent/service/json_log_formatter.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <spdlog/common.h>

#include <chrono>
#include <ctime>
#include <string>
#include <string_view>

#include "agent/service/run_log_context.hpp"

namespace takosumi::agent {
namespace {

std::string utc_millis(spdlog::log_clock::time_point when) {
  const auto since = when.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since - seconds);
  const std::time_t t = seconds.count();
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(millis.count()));
  return buf;
}

// "run <id>: …" → <id>.
std::string_view run_id_of(std::string_view message) {
  if (message.substr(0, 4) != "run ") return {};
  const auto end = message.find(':', 4);
  if (end == std::string_view::npos || end == 4) return {};
  const auto id = message.substr(4, end - 4);
  return id.find(' ') == std::string_view::npos ? id : std::string_view{};
}

void append(spdlog::memory_buf_t& dest, std::string_view text) {
  dest.append(text.data(), text.data() + text.size());
}

// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF) with each
// invalid byte replaced by U+FFFD: a tool's output cut mid-character must not make the line
// invalid JSON for a log shipper.
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
    if (c < 0x80) n = 1;
    else if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const unsigned char b = byte(i + k);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xbf);
    }
    if (ok) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

void append_quoted(spdlog::memory_buf_t& dest, std::string_view text) {
  append(dest, boost::json::serialize(boost::json::string(valid_utf8(text))));
}

}  // namespace

void JsonLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  const std::string_view message(msg.payload.data(), msg.payload.size());
  append(dest, "{\"time\":\"");
  append(dest, utc_millis(msg.time));
  append(dest, "\",\"level\":\"");
  const auto level = spdlog::level::to_string_view(msg.level);
  append(dest, std::string_view(level.data(), level.size()));
  append(dest, "\",\"message\":");
  append_quoted(dest, message);
  if (const auto run_id = run_id_of(message); !run_id.empty()) {
    append(dest, ",\"runId\":");
    append_quoted(dest, run_id);
    if (const auto fields = RunLogContext::instance().find(run_id)) {
      append(dest, ",\"attempt\":");
      append(dest, std::to_string(fields->attempt));
      append(dest, ",\"phase\":");
      append_quoted(dest, fields->phase);
    }
  }
  append(dest, "}\n");
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
  return std::make_unique<JsonLogFormatter>();
}

}  // namespace takosumi::agent
