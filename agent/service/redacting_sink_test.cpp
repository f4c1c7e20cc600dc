#include "agent/service/redacting_sink.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <memory>
#include <sstream>
#include <utility>

namespace takosumi::agent {
namespace {

struct CapturedLogger {
  std::ostringstream stream;
  std::shared_ptr<spdlog::logger> logger;

  CapturedLogger() {
    auto sink = std::make_shared<RedactingSink>(
        std::make_shared<spdlog::sinks::ostream_sink_mt>(stream));
    logger = std::make_shared<spdlog::logger>("redaction-test", std::move(sink));
    logger->set_pattern("%l %v");
  }
  std::string take() {
    auto text = stream.str();
    stream.str("");
    return text;
  }
};

std::shared_ptr<redaction::SecretSet> set_of(std::string_view value) {
  auto set = std::make_shared<redaction::SecretSet>();
  EXPECT_TRUE(set->add(value));
  return set;
}

TEST(RedactingSink, RedactsARegisteredSecretUntilTheRegistrationEnds) {
  CapturedLogger log;
  {
    SecretRegistration registration(set_of("sekrit-value-1"));
    log.logger->info("connecting with {}", "sekrit-value-1");
    EXPECT_EQ(log.take(), "info connecting with [REDACTED]\n");
  }
  log.logger->info("connecting with {}", "sekrit-value-1");
  EXPECT_EQ(log.take(), "info connecting with sekrit-value-1\n");
}

TEST(RedactingSink, AlwaysRedactsCredentialPatterns) {
  CapturedLogger log;
  log.logger->warn("tofu said: password=hunter22 at postgres://u:pw@db/x");
  EXPECT_EQ(log.take(), "warning tofu said: password=[REDACTED] at postgres://[REDACTED]@db/x\n");
}

TEST(SecretRegistration, MovesKeepTheSetRegisteredOnce) {
  SecretRegistry registry;
  auto set = set_of("sekrit-value-2");
  std::optional<SecretRegistration> moved;
  {
    SecretRegistration first(set, registry);
    moved.emplace(std::move(first));
  }
  EXPECT_EQ(registry.redact("x sekrit-value-2"), "x [REDACTED]");
  SecretRegistration other(set_of("another-secret"), registry);
  other = std::move(*moved);
  EXPECT_EQ(registry.redact("another-secret sekrit-value-2"), "another-secret [REDACTED]");
  moved.reset();
  EXPECT_EQ(registry.redact("sekrit-value-2"), "[REDACTED]");
}

TEST(SecretRegistry, ASetAddedTwiceStaysUntilRemovedTwice) {
  SecretRegistry registry;
  auto set = set_of("sekrit-value-3");
  registry.add(set);
  registry.add(set);
  registry.remove(set.get());
  EXPECT_EQ(registry.redact("sekrit-value-3"), "[REDACTED]");
  registry.remove(set.get());
  EXPECT_EQ(registry.redact("sekrit-value-3"), "sekrit-value-3");
}

}  // namespace
}  // namespace takosumi::agent
