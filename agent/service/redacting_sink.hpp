#pragma once
// An spdlog sink that redacts every message with a SecretRegistry (exact values of the Runs in
// progress, then credential patterns), formats it, and hands the line to the sink it wraps. The wrapped sink
// is given a pass-through formatter and receives the finished line (eol included), so colour
// ranges are not applied; set patterns on the RedactingSink or its logger, not on the wrapped sink.
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

#include <memory>
#include <mutex>
#include <string>

#include "agent/service/secret_registry.hpp"

namespace takosumi::agent {

class RedactingSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit RedactingSink(std::shared_ptr<spdlog::sinks::sink> next,
                         const SecretRegistry& registry = SecretRegistry::instance());

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  std::shared_ptr<spdlog::sinks::sink> next_;
  const SecretRegistry& registry_;
};

// A logger writing redacted lines to stderr; not registered with spdlog (pass it to
// spdlog::set_default_logger).
std::shared_ptr<spdlog::logger> make_redacting_stderr_logger(std::string name);

}  // namespace takosumi::agent
