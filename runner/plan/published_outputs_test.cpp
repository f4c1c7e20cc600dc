#include "runner/plan/published_outputs.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace takosumi::runner {
namespace {

using Allowlist = std::map<std::string, protocol::OutputMapping>;

boost::json::object outputs(const char* text) { return boost::json::parse(text).as_object(); }

TEST(PublishedOutputs, MappedPlainValuesArePublishedSensitiveOnesRefusedByName) {
  redaction::SecretSet secrets;
  PublishedOutputs published;
  const auto state = outputs(R"({
    "url": {"sensitive": false, "type": "string", "value": "https://db.internal"},
    "password": {"sensitive": true, "type": "string", "value": "correct horse battery staple"}})");
  ASSERT_TRUE(publish_outputs(state, Allowlist{{"endpoint", {"url", "string", true}},
                                               {"pw", {"password", "string", false}}},
                              secrets, published));
  EXPECT_EQ(published.outputs.size(), 1u);
  EXPECT_EQ(published.outputs.at("endpoint"), "https://db.internal");
  ASSERT_EQ(published.refused.size(), 1u);
  EXPECT_EQ(published.refused[0].name, "pw");
  EXPECT_EQ(published.refused[0].reason, protocol::kSensitiveOutputReason);
  EXPECT_TRUE(secrets.contains_secret("correct horse battery staple"))
      << "a sensitive Output's value is redacted from the log from now on";
}

TEST(PublishedOutputs, ACredentialShapedValueIsRefusedAndARequiredOneFailsTheRun) {
  const auto state = outputs(R"({
    "key": {"sensitive": false, "type": "string", "value": "AKIAIOSFODNN7EXAMPLE"}})");
  for (bool required : {false, true}) {
    redaction::SecretSet secrets;
    PublishedOutputs published;
    const Status done = publish_outputs(state, Allowlist{{"k", {"key", "string", required}}}, secrets, published);
    EXPECT_EQ(done.has_value(), !required);
    if (required) {
      EXPECT_EQ(done.error().code, "output_refused");
    }
    EXPECT_TRUE(published.outputs.empty());
    ASSERT_EQ(published.refused.size(), 1u) << "said also when the Run fails";
    EXPECT_EQ(published.refused[0].name, "k");
    ASSERT_EQ(published.notices.size(), 1u);
    EXPECT_NE(published.notices[0].find("looks like a credential"), std::string::npos);
    EXPECT_EQ(published.notices[0].find("AKIA"), std::string::npos) << "never the value";
  }
}

}  // namespace
}  // namespace takosumi::runner
