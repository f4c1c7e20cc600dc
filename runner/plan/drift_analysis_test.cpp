#include "runner/plan/drift_analysis.hpp"

#include <gtest/gtest.h>

namespace takosumi::runner {
namespace {

using Names = std::vector<std::string>;

std::string refresh_plan(const std::string& drift, const std::string& outputs = "{}") {
  return R"({"format_version":"1.2","terraform_version":"1.12.6","future_key":1,
             "resource_drift":[)" + drift + R"(],"output_changes":)" + outputs + "}";
}

std::string entry(const std::string& address, const std::string& actions,
                  const std::string& before, const std::string& after,
                  const std::string& extra = "") {
  return R"({"address":")" + address + R"(","mode":"managed","type":")" +
         address.substr(0, address.find('.')) + R"(","name":"n","change":{"actions":)" + actions +
         R"(,"before":)" + before + R"(,"after":)" + after + extra + "}}";
}

TEST(DriftAnalysis, UpdateNamesTheDifferingAttributesSortedWithoutValues) {
  auto r = analyze_drift(refresh_plan(entry(
      "aws_instance.web", R"(["update"])",
      R"({"tags":{"a":"1"},"ami":"ami-1","password":"old-secret","size":2,"gone":1})",
      R"({"tags":{"a":"2"},"ami":"ami-1","password":"new-secret","size":2,"added":true})",
      R"(,"before_sensitive":{"password":true},"after_sensitive":{"password":true})")));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->status, "drift");
  ASSERT_EQ(r->resources.size(), 1u);
  const auto& d = r->resources[0];
  EXPECT_EQ(d.address, "aws_instance.web");
  EXPECT_EQ(d.type, "aws_instance");
  EXPECT_EQ(d.action, "update");
  EXPECT_EQ(d.attributes, (Names{"added", "gone", "password", "tags"}));
}

TEST(DriftAnalysis, DeleteIsNamedAsDeleted) {
  auto r = analyze_drift(refresh_plan(
      entry("local_file.f", R"(["delete"])", R"({"content":"hello","filename":"./f"})", "null",
            R"(,"before_sensitive":{"sensitive_content":true},"after_sensitive":false)")));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->status, "drift");
  ASSERT_EQ(r->resources.size(), 1u);
  EXPECT_EQ(r->resources[0].action, "delete");
  EXPECT_EQ(r->resources[0].attributes, (Names{"(deleted)"}));
}

TEST(DriftAnalysis, UnknownAfterRefreshCountsAsDiffering) {
  auto r = analyze_drift(refresh_plan(entry("x_thing.t", R"(["update"])", R"({"a":1,"b":2})",
                                            R"({"a":1,"b":2})", R"(,"after_unknown":{"b":true})")));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->resources.size(), 1u);
  EXPECT_EQ(r->resources[0].attributes, (Names{"b"}));
}

TEST(DriftAnalysis, NoOpReadAndOutputChangesAreNotDrift) {
  auto r = analyze_drift(refresh_plan(
      entry("terraform_data.a", R"(["no-op"])", "{}", "{}") + "," +
          entry("data_source.d", R"(["read"])", "null", "{}"),
      R"({"o":{"actions":["update"],"before":"one","after":"two"}})"));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->status, "no_drift");
  EXPECT_TRUE(r->resources.empty());
}

TEST(DriftAnalysis, MissingOrNullDriftListIsNoDrift) {
  for (const char* doc : {R"({"format_version":"1.2"})",
                          R"({"format_version":"1.2","resource_drift":null})"}) {
    auto r = analyze_drift(doc);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(r->status, "no_drift") << doc;
  }
}

TEST(DriftAnalysis, SeveralActionsAreJoined) {
  auto r = analyze_drift(refresh_plan(entry("x_thing.t", R"(["delete","create"])", R"({"a":1})",
                                            R"({"a":2})")));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->resources.size(), 1u);
  EXPECT_EQ(r->resources[0].action, "delete,create");
  EXPECT_EQ(r->resources[0].attributes, (Names{"a"}));
}

TEST(DriftAnalysis, RefusesOtherFormatsAndGarbage) {
  for (const char* bad : {R"({"format_version":"2.0"})", "{}", "not json",
                          R"({"format_version":"1.2","resource_drift":[{"address":"a"}]})",
                          R"({"format_version":"1.2","resource_drift":[{"address":"a","change":{}}]})",
                          R"({"format_version":"1.2","resource_drift":{}})"}) {
    auto r = analyze_drift(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "opentofu_failed") << bad;
  }
}

}  // namespace
}  // namespace takosumi::runner
