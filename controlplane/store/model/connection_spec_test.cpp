// The rules for Connection requests, sensitive variables and Connection assignment. Pure.
#include "controlplane/store/model/connection_spec.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;
constexpr const char* kValue = "VALUE-THAT-MUST-NOT-LEAK-7731";
constexpr std::int64_t kNow = 1'700'000'000;

json::object request(json::object values) {
  return {{"workspaceId", "ws_1"}, {"name", "aws-prod"},
          {"provider", "registry.opentofu.org/hashicorp/aws"}, {"authMode", "env"},
          {"values", std::move(values)}};
}

Error refused(json::object body) {
  auto r = take_connection_request(body, kNow);
  EXPECT_FALSE(r) << "accepted: " << json::serialize(body);
  return r ? Error{} : r.error();
}

Connection connection(std::string id, std::vector<std::string> names, std::string ws = "ws_1") {
  Connection c;
  c.id = std::move(id);
  c.workspace_id = std::move(ws);
  c.name = "name-of-" + c.id;
  c.provider = "registry.opentofu.org/hashicorp/aws";
  c.credential_names = std::move(names);
  return c;
}

TEST(ConnectionSpecTest, ParsesARequestAndZeroesTheValuesInTheJson) {
  json::object body = request({{"AWS_ACCESS_KEY_ID", kValue}, {"AWS_SECRET_ACCESS_KEY", "s"}});
  body["expiresAt"] = kNow + 60;
  body["authMode"] = "files";
  auto r = take_connection_request(body, kNow);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->workspace_id, "ws_1");
  EXPECT_EQ(r->name, "aws-prod");
  EXPECT_EQ(r->auth_mode, protocol::AuthMode::files);
  EXPECT_EQ(r->expires_at, kNow + 60);
  ASSERT_EQ(r->values.size(), 2u);
  EXPECT_EQ(r->values.at("AWS_ACCESS_KEY_ID").reveal_as_string(), kValue);
  EXPECT_EQ(json::serialize(body).find(kValue), std::string::npos);
}

TEST(ConnectionSpecTest, RefusesBadNamesWithTheRuleAndNeverQuotesAValue) {
  auto reserved = refused(request({{"PATH", kValue}}));
  EXPECT_EQ(reserved.code, errc::kInvalidArgument);
  EXPECT_NE(reserved.message.find("reserved"), std::string::npos) << reserved.message;
  EXPECT_NE(reserved.message.find("PATH"), std::string::npos);
  auto prefixed = refused(request({{"TF_VAR_x", kValue}}));
  EXPECT_NE(prefixed.message.find("^[A-Z_][A-Z0-9_]*$"), std::string::npos) << prefixed.message;
  auto tf = refused(request({{"TF_LOG", kValue}}));
  EXPECT_NE(tf.message.find("reserved"), std::string::npos) << tf.message;
  auto big = refused(request({{"TOKEN", std::string(protocol::kMaxSecretValueBytes + 1, 'x')}}));
  EXPECT_NE(big.message.find("64 KiB"), std::string::npos);
  auto not_string = refused(request({{"TOKEN", 42}}));
  EXPECT_NE(not_string.message.find("values.TOKEN"), std::string::npos);
  for (const auto& e : std::vector<Error>{reserved, prefixed, tf, big, not_string})
    EXPECT_EQ(e.message.find(kValue), std::string::npos) << e.message;
}

TEST(ConnectionSpecTest, RefusesBadFields) {
  auto no_values = request({});
  EXPECT_NE(refused(no_values).message.find("values"), std::string::npos);
  auto bad_name = request({{"TOKEN", "v"}});
  bad_name["name"] = "Not Valid";
  EXPECT_NE(refused(bad_name).message.find("^[a-z0-9]"), std::string::npos);
  auto short_provider = request({{"TOKEN", "v"}});
  short_provider["provider"] = "hashicorp/aws";
  EXPECT_NE(refused(short_provider).message.find("fully qualified"), std::string::npos);
  auto mode = request({{"TOKEN", "v"}});
  mode["authMode"] = "magic";
  EXPECT_NE(refused(mode).message.find("authMode"), std::string::npos);
  auto past = request({{"TOKEN", "v"}});
  past["expiresAt"] = kNow;
  EXPECT_NE(refused(past).message.find("future"), std::string::npos);
  json::object too_many;
  for (int i = 0; i < 65; ++i) too_many["K" + std::to_string(i)] = "v";
  EXPECT_NE(refused(request(too_many)).message.find("1 to 64"), std::string::npos);
}

TEST(ConnectionSpecTest, SensitiveVariablesFollowTheVariableRulesAndStayApartFromPlainOnes) {
  json::object body{{"sensitiveVariables", json::object{{"db_password", kValue}}}};
  auto taken = take_sensitive_variables(body);
  ASSERT_TRUE(taken && *taken);
  EXPECT_EQ((*taken)->at("db_password").reveal_as_string(), kValue);
  EXPECT_EQ(json::serialize(body).find(kValue), std::string::npos);
  EXPECT_FALSE(check_no_plain_twin(**taken, {{"db_password", "plain"}}));
  EXPECT_TRUE(check_no_plain_twin(**taken, {{"region", "eu"}}));

  json::object bad{{"sensitiveVariables", json::object{{"9lives", kValue}}}};
  auto refused_name = take_sensitive_variables(bad);
  ASSERT_FALSE(refused_name);
  EXPECT_NE(refused_name.error().message.find("^[A-Za-z_]"), std::string::npos);
  EXPECT_EQ(json::serialize(bad).find(kValue), std::string::npos) << "zeroed even when refused";
  json::object absent;
  EXPECT_FALSE(*take_sensitive_variables(absent));
}

TEST(ConnectionSpecTest, ConnectionIdsAreDistinctStrings) {
  auto ids = parse_connection_ids({{"connections", json::array{"conn_a", "conn_b"}}});
  ASSERT_TRUE(ids && *ids);
  EXPECT_EQ(**ids, (std::vector<std::string>{"conn_a", "conn_b"}));
  EXPECT_FALSE(parse_connection_ids({{"connections", json::array{"conn_a", "conn_a"}}}));
  EXPECT_FALSE(parse_connection_ids({{"connections", json::array{1}}}));
  EXPECT_FALSE(*parse_connection_ids({}));
}

TEST(ConnectionSpecTest, AssignmentRules) {
  EXPECT_TRUE(check_assignment("ws_1", {connection("a", {"A"}), connection("b", {"B"})}, kNow));

  auto foreign = check_assignment("ws_1", {connection("a", {"A"}, "ws_2")}, kNow);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code, errc::kInvalidArgument);
  // The other Workspace is not named: the caller may hold no role there.
  EXPECT_EQ(foreign.error().message.find("ws_2"), std::string::npos);
  EXPECT_NE(foreign.error().message.find("not a Connection of the capsule's workspace ws_1"),
            std::string::npos) << foreign.error().message;

  auto twice = check_assignment("ws_1", {connection("a", {"A", "SHARED"}), connection("b", {"SHARED"})}, kNow);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, errc::kInvalidArgument);
  for (const char* part : {"name-of-a", "name-of-b", "SHARED"})
    EXPECT_NE(twice.error().message.find(part), std::string::npos) << twice.error().message;

  Connection revoked = connection("r", {"R"});
  revoked.revoked_at = kNow - 1;
  EXPECT_EQ(check_assignment("ws_1", {revoked}, kNow).error().code, errc::kConnectionRevoked);
  Connection expired = connection("e", {"E"});
  expired.expires_at = kNow;
  EXPECT_EQ(check_assignment("ws_1", {expired}, kNow).error().code, errc::kConnectionExpired);
  EXPECT_EQ(expired.status(kNow - 1), connection_status::kActive);
  EXPECT_EQ(expired.status(kNow), connection_status::kExpired);

  std::vector<Connection> many;
  for (std::size_t i = 0; i <= protocol::kMaxConnectionsPerRun; ++i)
    many.push_back(connection("c" + std::to_string(i), {"N" + std::to_string(i)}));
  EXPECT_FALSE(check_assignment("ws_1", many, kNow));
}

}  // namespace
}  // namespace takosumi::controlplane
