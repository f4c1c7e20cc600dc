#include "runner/plan/output_filter.hpp"

#include <gtest/gtest.h>

namespace takosumi::runner {
namespace {

using Allowlist = std::map<std::string, protocol::OutputMapping>;

// The shape of `tofu output -json`.
constexpr const char* kOutputs = R"({
  "endpoint": {"sensitive": false, "type": "string", "value": "https://db.internal"},
  "port": {"sensitive": false, "type": "number", "value": 5432},
  "enabled": {"sensitive": false, "type": "bool", "value": true},
  "tags": {"sensitive": false, "type": ["list", "string"], "value": ["a", "b"]},
  "password": {"sensitive": true, "type": "string", "value": "hunter2"},
  "internal": {"sensitive": false, "type": "string", "value": "not for publishing"}
})";

TEST(OutputFilter, PublishesOnlyMappedNonSensitiveOutputsUnderTheirPublicNames) {
  Allowlist allow{{"url", {"endpoint", "string", true}},
                  {"port", {"port", "number", false}},
                  {"on", {"enabled", "bool", false}},
                  {"labels", {"tags", "any", false}}};
  auto r = filter_outputs(kOutputs, allow);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->outputs.size(), 4u);
  EXPECT_EQ(r->outputs.at("url"), "https://db.internal");
  EXPECT_EQ(r->outputs.at("port"), 5432);
  EXPECT_EQ(r->outputs.at("on"), true);
  EXPECT_EQ(r->outputs.at("labels"), (boost::json::array{"a", "b"}));
  EXPECT_FALSE(r->outputs.contains("internal"));
  EXPECT_FALSE(r->outputs.contains("endpoint"));
  EXPECT_TRUE(r->warnings.empty());
}

TEST(OutputFilter, SensitiveOutputIsDroppedEvenWhenMappedAndRequired) {
  for (bool required : {false, true}) {
    auto r = filter_outputs(kOutputs, Allowlist{{"pw", {"password", "string", required}}});
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_TRUE(r->outputs.empty());
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_NE(r->warnings[0].find("password"), std::string::npos);
    EXPECT_EQ(r->warnings[0].find("hunter2"), std::string::npos);
  }
}

TEST(OutputFilter, NonBooleanSensitiveFlagIsTreatedAsSensitive) {
  auto r = filter_outputs(R"({"x":{"sensitive":"yes","value":"v"}})",
                          Allowlist{{"x", {"x", "any", false}}});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->outputs.empty());
}

TEST(OutputFilter, MissingRequiredOutputFailsNamingIt) {
  auto r = filter_outputs(kOutputs, Allowlist{{"db", {"database_url", "string", true}}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "output_required_missing");
  EXPECT_NE(r.error().message.find("database_url"), std::string::npos);
}

TEST(OutputFilter, MissingOptionalOutputIsLeftOut) {
  auto r = filter_outputs(kOutputs, Allowlist{{"db", {"database_url", "string", false}}});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->outputs.empty());
}

TEST(OutputFilter, TypeMismatchFailsWithoutTheValue) {
  for (auto [from, type] : {std::pair{"port", "string"}, std::pair{"endpoint", "number"},
                            std::pair{"endpoint", "bool"}, std::pair{"tags", "string"}}) {
    auto r = filter_outputs(kOutputs, Allowlist{{"x", {from, type, false}}});
    ASSERT_FALSE(r) << from << " as " << type;
    EXPECT_EQ(r.error().code, "output_type_mismatch");
    EXPECT_NE(r.error().message.find(from), std::string::npos);
    EXPECT_EQ(r.error().message.find("db.internal"), std::string::npos);
  }
}

TEST(OutputFilter, UnknownMappingTypeIsManifestInvalid) {
  auto r = filter_outputs(kOutputs, Allowlist{{"x", {"endpoint", "map", false}}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "manifest_invalid");
}

TEST(OutputFilter, NotAnOutputDocumentFails) {
  auto r = filter_outputs("[1,2]", Allowlist{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "opentofu_failed");
}

// A plan's planned_values.outputs: the value of a sensitive output may still be unknown (absent),
// its flag is there all the same; only the mapped ones are named, by their public names.
TEST(OutputFilter, APlansSensitiveMappedOutputsAreNamedBeforeTheyHaveValues) {
  auto planned = parse_object(R"({"token": {"sensitive": true},
                                   "endpoint": {"sensitive": false, "value": "db.internal"},
                                   "secret_unmapped": {"sensitive": true},
                                   "odd": {"sensitive": "yes"}})",
                              4096);
  ASSERT_TRUE(planned);
  const auto names = sensitive_mapped_outputs(
      *planned, Allowlist{{"apiToken", {"token", "string", false}},
                          {"url", {"endpoint", "string", false}},
                          {"oddity", {"odd", "string", false}},
                          {"missing", {"not_in_plan", "string", false}}});
  EXPECT_EQ(names, (std::vector<std::string>{"apiToken", "oddity"}));
}

}  // namespace
}  // namespace takosumi::runner
