#include "agent/service/redacting_sink.hpp"

#include <spdlog/formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <string_view>
#include <utility>

namespace takosumi::agent {
namespace {

// The message reaching the wrapped sink is already formatted and redacted.
class PassThroughFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    dest.append(msg.payload.data(), msg.payload.data() + msg.payload.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<PassThroughFormatter>();
  }
};

}  // namespace

RedactingSink::RedactingSink(std::shared_ptr<spdlog::sinks::sink> next,
                             const SecretRegistry& registry)
    : next_(std::move(next)), registry_(registry) {
  next_->set_formatter(std::make_unique<PassThroughFormatter>());
}

// The message is redacted before it is formatted: a formatter that escapes (logFormat: json)
// would otherwise hide a secret holding a quote or a backslash from the exact-value match. The
// formatter adds only time, level and the fields of agent/service/run_log_context.hpp.
void RedactingSink::sink_it_(const spdlog::details::log_msg& msg) {
  const auto redacted =
      registry_.redact(std::string_view(msg.payload.data(), msg.payload.size()));
  spdlog::details::log_msg clean = msg;
  clean.payload = spdlog::string_view_t(redacted.data(), redacted.size());
  spdlog::memory_buf_t formatted;
  formatter_->format(clean, formatted);
  spdlog::details::log_msg out = msg;
  out.payload = spdlog::string_view_t(formatted.data(), formatted.size());
  next_->log(out);
}

void RedactingSink::flush_() { next_->flush(); }

std::shared_ptr<spdlog::logger> make_redacting_stderr_logger(std::string name) {
  auto sink = std::make_shared<RedactingSink>(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  return std::make_shared<spdlog::logger>(std::move(name), std::move(sink));
}

}  // namespace takosumi::agent
