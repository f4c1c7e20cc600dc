#pragma once
// logFormat: json — one JSON object per line for journald and log shippers:
//   {"time":"2026-12-03T17:04:05.123Z","level":"info","message":"…","runId":"…","attempt":1,
//    "phase":"claimed"}
// runId, attempt and phase only on lines about a Run (agent/service/run_log_context.hpp). The message is
// already redacted when it gets here (agent/service/redacting_sink.hpp redacts before formatting), and
// every character a JSON string cannot hold raw is escaped, so a line cannot forge fields.
#include <spdlog/formatter.h>

#include <memory>

namespace takosumi::agent {

class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

}  // namespace takosumi::agent
