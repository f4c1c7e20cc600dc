#include "agent/service/json_log_formatter.hpp"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <memory>
#include <sstream>

#include "agent/service/redacting_sink.hpp"
#include "agent/service/run_log_context.hpp"

namespace takosumi::agent {
namespace {

struct JsonLogger {
  std::ostringstream stream;
  std::shared_ptr<spdlog::logger> logger;
  JsonLogger() {
    auto sink = std::make_shared<RedactingSink>(
        std::make_shared<spdlog::sinks::ostream_sink_mt>(stream));
    logger = std::make_shared<spdlog::logger>("json-test", std::move(sink));
    logger->set_formatter(std::make_unique<JsonLogFormatter>());
  }
  boost::json::object take() {
    const auto line = stream.str();
    stream.str("");
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per message: " << line;
    return boost::json::parse(line).as_object();
  }
};

// A secret holding a quote and a backslash: escaping it for JSON first would hide it from the
// exact-value match, so redaction has to come before formatting.
TEST(JsonLogFormatter, RedactsBeforeEscapingAndCannotBeSplitIntoFields) {
  JsonLogger log;
  auto set = std::make_shared<redaction::SecretSet>();
  ASSERT_TRUE(set->add(R"(pa"ss\word-1234)"));
  SecretRegistration registration(set);
  log.logger->warn("login with {} failed\n{{\"level\":\"forged\"}}", R"(pa"ss\word-1234)");
  auto o = log.take();
  EXPECT_EQ(o.at("level").as_string(), "warning");
  EXPECT_EQ(o.at("message").as_string(), "login with [REDACTED] failed\n{\"level\":\"forged\"}");
  EXPECT_FALSE(o.contains("runId"));
  EXPECT_NE(o.at("time").as_string().find('T'), boost::json::string::npos);
}

TEST(JsonLogFormatter, LinesAboutARunCarryItsIdAttemptAndPhase) {
  JsonLogger log;
  RunLogContext::instance().set("run_abc", {2, "apply"});
  log.logger->info("run run_abc: apply starts");
  auto o = log.take();
  EXPECT_EQ(o.at("runId").as_string(), "run_abc");
  EXPECT_EQ(o.at("attempt").as_int64(), 2);
  EXPECT_EQ(o.at("phase").as_string(), "apply");
  RunLogContext::instance().erase("run_abc");
  log.logger->info("run run_abc: delivered");
  o = log.take();
  EXPECT_EQ(o.at("runId").as_string(), "run_abc");
  EXPECT_FALSE(o.contains("attempt"));
  log.logger->info("running 2 Runs");
  EXPECT_FALSE(log.take().contains("runId"));
}

// A line cut in the middle of a character (or bytes that never were UTF-8) stays valid JSON.
TEST(JsonLogFormatter, InvalidUtf8BecomesReplacementCharacters) {
  JsonLogger log;
  log.logger->info("cut: caf\xc3 and \xff\xfe and \xed\xa0\x80 and ok: caf\xc3\xa9");
  auto o = log.take();
  EXPECT_EQ(o.at("message").as_string(),
            "cut: caf\xEF\xBF\xBD and \xEF\xBF\xBD\xEF\xBF\xBD and "
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD and ok: caf\xc3\xa9");
}

}  // namespace
}  // namespace takosumi::agent
