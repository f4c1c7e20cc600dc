#include "agent/json_log_formatter.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <spdlog/common.h>

#include <chrono>
#include <ctime>
#include <string>
#include <string_view>

#include "agent/run_log_context.hpp"

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

void append_quoted(spdlog::memory_buf_t& dest, std::string_view text) {
  append(dest, boost::json::serialize(boost::json::string(text)));
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
