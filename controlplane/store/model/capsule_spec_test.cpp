#include "controlplane/store/model/capsule_spec.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

json::object capsule_body() {
  return json::object{
      {"name", "web-app"},
      {"source", json::object{{"gitUrl", "file:///srv/repo"}, {"ref", "main"}, {"modulePath", "infra/app"}}},
      {"outputAllowlist",
       json::object{{"url", json::object{{"from", "app_url"}, {"type", "string"}, {"required", true}}},
                    {"port", json::object{{"from", "port"}, {"type", "number"}}}}},
      {"variables", json::object{{"greeting", "hello"}}}};
}

// Applies a mutation and expects parse_capsule_request to fail with `code` naming `fragment`.
void expect_invalid(void (*mutate)(json::object&), const std::string& fragment,
                    std::string_view code = errc::kInvalidArgument) {
  auto body = capsule_body();
  mutate(body);
  auto r = parse_capsule_request(body);
  ASSERT_FALSE(r) << "accepted: " << json::serialize(body);
  EXPECT_EQ(r.error().code, code);
  EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
}

TEST(CapsuleSpec, NamesFollowThePattern) {
  for (const char* ok : {"a", "web", "web-app_2", "0abc"}) EXPECT_TRUE(is_valid_name(ok)) << ok;
  EXPECT_TRUE(is_valid_name(std::string(63, 'a')));
  for (const char* bad : {"", "Web", "-web", "_web", "web app", "wéb", "web.app"})
    EXPECT_FALSE(is_valid_name(bad)) << bad;
  EXPECT_FALSE(is_valid_name(std::string(64, 'a')));
}

TEST(CapsuleSpec, OutputNamesFollowThePattern) {
  for (const char* ok : {"url", "_x", "Url2", "A_B"}) EXPECT_TRUE(is_valid_output_name(ok)) << ok;
  for (const char* bad : {"", "1url", "a-b", "a.b", "a b"}) EXPECT_FALSE(is_valid_output_name(bad)) << bad;
}

TEST(CapsuleSpec, ParsesAValidRequest) {
  auto r = parse_capsule_request(capsule_body());
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->name, "web-app");
  EXPECT_EQ(r->source.module_path, "infra/app");
  ASSERT_EQ(r->output_allowlist.size(), 2u);
  EXPECT_EQ(r->output_allowlist.at("url").from, "app_url");
  EXPECT_TRUE(r->output_allowlist.at("url").required);
  EXPECT_EQ(r->output_allowlist.at("port").type, "number");
  EXPECT_FALSE(r->output_allowlist.at("port").required);
  EXPECT_EQ(r->variables.at("greeting"), "hello");
}

TEST(CapsuleSpec, DefaultsRefToHeadAndModulePathToRoot) {
  json::object body{{"name", "a"}, {"source", json::object{{"gitUrl", "https://example.com/r.git"}}}};
  auto r = parse_capsule_request(body);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->source.ref, "HEAD");
  EXPECT_EQ(r->source.module_path, "");
  EXPECT_TRUE(r->output_allowlist.empty());
}

TEST(CapsuleSpec, RejectsBadNames) {
  expect_invalid([](json::object& b) { b["name"] = "Web_App"; }, "name \"Web_App\"");
  expect_invalid([](json::object& b) { b.erase("name"); }, "\"name\" is required");
}

TEST(CapsuleSpec, RejectsBadSources) {
  expect_invalid([](json::object& b) { b.erase("source"); }, "\"source\" is required");
  expect_invalid([](json::object& b) { b["source"].as_object()["gitUrl"] = ""; }, "source.gitUrl",
                 errc::kSourceDenied);
  expect_invalid([](json::object& b) { b["source"].as_object()["gitUrl"] = "https://u:p@h/r.git"; },
                 "Connection of kind git", errc::kSourceDenied);
  expect_invalid([](json::object& b) { b["source"].as_object()["gitUrl"] = "/srv/repos/a"; },
                 "must not be a local path", errc::kSourceDenied);
  expect_invalid([](json::object& b) { b["source"].as_object()["connection"] = "conn x"; },
                 "source.connection");
  expect_invalid([](json::object& b) { b["source"].as_object()["ref"] = "--upload-pack=x"; }, "source.ref");
  expect_invalid([](json::object& b) { b["source"].as_object()["modulePath"] = "../up"; }, "source.modulePath");
  expect_invalid([](json::object& b) { b["source"].as_object()["modulePath"] = "a/../../b"; }, "\"..\"");
  expect_invalid([](json::object& b) { b["source"].as_object()["modulePath"] = "/etc"; }, "relative");
}

TEST(CapsuleSpec, RejectsBadAllowlists) {
  expect_invalid([](json::object& b) { b["outputAllowlist"] = json::object{{"1url", json::object{{"from", "x"}}}}; },
                 "public name \"1url\"");
  expect_invalid([](json::object& b) { b["outputAllowlist"] = json::object{{"db-url", json::object{{"from", "x"}}}}; },
                 "public name \"db-url\"");
  expect_invalid([](json::object& b) { b["outputAllowlist"] = json::object{{"url", json::object{{"type", "string"}}}}; },
                 "outputAllowlist.url");
  expect_invalid([](json::object& b) {
    b["outputAllowlist"] = json::object{{"url", json::object{{"from", "x"}, {"type", "integer"}}}};
  }, "outputAllowlist.url.type \"integer\"");
  expect_invalid([](json::object& b) { b["outputAllowlist"] = json::object{{"url", "app_url"}}; },
                 "outputAllowlist.url must be an object");
  expect_invalid([](json::object& b) { b["outputAllowlist"] = json::array{}; }, "\"outputAllowlist\" must be an object");
}

TEST(CapsuleSpec, VariablesTakeAnyJsonValueAndRefuseBadNamesAndHugeValues) {
  auto body = capsule_body();
  const json::object typed{{"enabled", true},
                           {"count", 3},
                           {"ratio", 0.5},
                           {"zones", json::array{"a", "b"}},
                           {"tags", json::object{{"team", "infra"}}},
                           {"nothing", nullptr}};
  body["variables"] = typed;
  auto r = parse_capsule_request(body);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(protocol::to_json(r->variables), typed);

  expect_invalid([](json::object& b) { b["variables"] = json::object{{"1x", "v"}}; }, "\"1x\"");
  expect_invalid([](json::object& b) {
    b["variables"] = json::object{{"big", json::array(70 * 1024, json::value(1))}};
  }, "variables.big is longer than 64 KiB");
}

TEST(CapsuleSpec, PolicyIsOptionalAndParsed) {
  auto none = parse_capsule_request(capsule_body());
  ASSERT_TRUE(none);
  EXPECT_EQ(none->policy, protocol::RunPolicy{}) << "nothing allowed beyond providers";

  const std::string null_provider = "registry.opentofu.org/hashicorp/null";
  auto body = capsule_body();
  body["policy"] = json::object{{"allowedProviders", json::array{null_provider}},
                                {"allowProvisioners", true}, {"network", "none"}};
  auto r = parse_capsule_request(body);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->policy.allowed_providers, std::vector<std::string>{null_provider});
  EXPECT_TRUE(r->policy.allow_provisioners);
  EXPECT_FALSE(r->policy.allow_external_data);
  EXPECT_EQ(r->policy.network, protocol::NetworkMode::none);
}

// Each policy is tried inside a Capsule request and directly, as the body of PUT …/policy.
void expect_invalid_policy(const json::value& policy, const std::string& fragment) {
  auto body = capsule_body();
  body["policy"] = policy;
  auto r = parse_capsule_request(body);
  ASSERT_FALSE(r) << "accepted: " << json::serialize(policy);
  EXPECT_EQ(r.error().code, errc::kInvalidArgument);
  EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
  if (!policy.is_object()) return;
  auto direct = parse_policy(policy.get_object());
  ASSERT_FALSE(direct);
  EXPECT_EQ(direct.error().message, r.error().message);
}

TEST(CapsuleSpec, RejectsBadPoliciesNamingTheField) {
  expect_invalid_policy(json::object{{"allowedProviders", json::array{"hashicorp/aws"}}},
                        "policy.allowedProviders: each entry must be a fully qualified");
  expect_invalid_policy(json::object{{"deniedProviders", "aws"}},
                        "policy.deniedProviders must be an array");
  expect_invalid_policy(json::object{{"network", "host"}},
                        "policy.network must be \"default\" or \"none\"");
  expect_invalid_policy(json::object{{"network", 1}}, "policy.network must be a string");
  expect_invalid_policy(json::object{{"allowExternalData", "yes"}},
                        "policy.allowExternalData must be true or false");
  expect_invalid_policy(json::object{{"deniedProvider", json::array{}}},
                        "unknown field \"policy.deniedProvider\"");
  expect_invalid_policy(json::array{}, "\"policy\" must be an object");
}

TEST(CapsuleSpec, OpentofuVersionIsAnOptionalConstraint) {
  EXPECT_FALSE(parse_capsule_request(capsule_body())->opentofu_version);
  for (const json::value& none : {json::value(nullptr), json::value("")}) {
    auto body = capsule_body();
    body["opentofuVersion"] = none;
    auto r = parse_capsule_request(body);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_FALSE(r->opentofu_version) << json::serialize(none);
  }
  for (const char* ok : {"~> 1.10.0", ">= 1.9, < 2.0", "v1.11.0"}) {
    auto body = capsule_body();
    body["opentofuVersion"] = ok;
    auto r = parse_capsule_request(body);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(r->opentofu_version, ok) << "kept as given";
  }
  expect_invalid([](json::object& b) { b["opentofuVersion"] = "latest"; },
                 "opentofuVersion: \"latest\" is not a version constraint");
  expect_invalid([](json::object& b) { b["opentofuVersion"] = "=> 1.0"; },
                 "opentofuVersion: \"=> 1.0\" is not a version constraint");
  expect_invalid([](json::object& b) { b["opentofuVersion"] = ">= 1.9,"; }, "opentofuVersion: ");
  expect_invalid([](json::object& b) { b["opentofuVersion"] = "1.11.0-beta1"; },
                 "cannot name a prerelease");
  expect_invalid([](json::object& b) { b["opentofuVersion"] = 1.10; },
                 "\"opentofuVersion\" must be a string");
  expect_invalid([](json::object& b) { b["opentofuVersion"] = ">= " + std::string(254, '1'); },
                 "\"opentofuVersion\" is longer than 256");
}

TEST(CapsuleSpec, AllowlistRoundTripsThroughJson) {
  auto r = parse_capsule_request(capsule_body());
  ASSERT_TRUE(r);
  auto back = allowlist_from_json(protocol::to_json(r->output_allowlist));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->at("url").from, "app_url");
  EXPECT_EQ(back->at("port").type, "number");
}

TEST(CapsuleSpec, FilterOutputsKeepsOnlyMappedNamesOfTheRightType) {
  OutputAllowlist allow{{"url", {"app_url", "string", true}},
                        {"port", {"port", "number", false}},
                        {"anything", {"x", "any", false}}};
  json::object values{{"url", "https://x"}, {"port", "8080"}, {"anything", json::array{1, 2}},
                      {"password", "hunter2"}};
  auto filtered = filter_outputs(values, allow);
  ASSERT_TRUE(filtered) << filtered.error().message;
  const auto& out = *filtered;
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(out.at("url"), "https://x");
  EXPECT_TRUE(out.contains("anything"));
  EXPECT_FALSE(out.contains("password"));
  EXPECT_FALSE(out.contains("port"));  // declared number, sent a string
}

}  // namespace
}  // namespace takosumi::controlplane
