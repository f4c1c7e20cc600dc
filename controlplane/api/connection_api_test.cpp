// Connections and a Capsule's secrets over the real HTTP API, with the test playing the agent:
// values are write-only (no answer, error or file of the control plane ever holds one), the
// assignment rules, the sealed "secrets" of a manifest, and revoked or expired Connections.
#include "common/clock.hpp"
#include "controlplane/testing/http_api_fixture.hpp"
#include "protocol/secret_bundle.hpp"

namespace takosumi::controlplane {
namespace {

const std::string kAwsKeyId = "AKIA-PLANTED-VALUE-0001";
const std::string kAwsSecret = "planted-aws-secret-0002";
const std::string kGcpJson = R"({"type":"service_account","private_key":"planted-gcp-0003"})";
const std::string kDbPassword = "planted-db-password-0004";
const std::vector<std::string> kPlanted{kAwsKeyId, kAwsSecret, "planted-gcp-0003", kDbPassword};

const std::string kAws = "registry.opentofu.org/hashicorp/aws";
const std::string kGoogle = "registry.opentofu.org/hashicorp/google";

class ConnectionApiTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    workspace_ = create_workspace();
  }

  // Every answer of the test passes through here and is checked for planted values at the end.
  Reply call(http::verb verb, const std::string& target, const json::value& body = json::object{}) {
    Reply r = api(verb, target, body);
    bodies_.push_back(r.body);
    return r;
  }
  void TearDown() override {
    for (const auto& body : bodies_)
      for (const auto& value : kPlanted)
        EXPECT_EQ(body.find(value), std::string::npos) << "answer holds a value: " << body;
    HttpApiTest::TearDown();
  }

  Reply post_connection(json::object body) {
    return call(http::verb::post, "/api/v1/connections", body);
  }
  json::object connection_body(const std::string& name, const std::string& provider,
                               json::object values, const std::string& mode = "env") {
    return {{"workspaceId", workspace_}, {"name", name}, {"provider", provider},
            {"authMode", mode}, {"values", std::move(values)}};
  }
  std::string aws_connection(const std::string& name = "aws-prod") {
    auto r = post_connection(connection_body(
        name, kAws, {{"AWS_SECRET_ACCESS_KEY", kAwsSecret}, {"AWS_ACCESS_KEY_ID", kAwsKeyId}}));
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.status == 201u ? r.str("id") : "";
  }
  std::string gcp_connection() {
    auto r = post_connection(connection_body("gcp", kGoogle, {{"GOOGLE_CREDENTIALS", kGcpJson}}, "files"));
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.status == 201u ? r.str("id") : "";
  }

  Reply post_capsule(json::object extra) {
    json::object body{{"name", "app"},
                      {"source", json::object{{"gitUrl", "file:///unused"},
                                              {"ref", std::string(40, 'c')}}}};
    for (auto& kv : extra) body[kv.key()] = kv.value();
    return call(http::verb::post, "/api/v1/workspaces/" + workspace_ + "/capsules", body);
  }
  Reply assign(const std::string& capsule, json::array ids) {
    return call(http::verb::put, "/api/v1/capsules/" + capsule + "/connections",
                json::object{{"connections", std::move(ids)}});
  }
  Reply plan(const std::string& capsule) {
    return call(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  }
  json::array claim_nothing() {
    auto r = agent(http::verb::post, "/agent/v1/claim", json::object{{"freeSlots", 1}});
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.obj().at("jobs").as_array();
  }
  Reply get_run(const std::string& id) { return call(http::verb::get, "/api/v1/runs/" + id); }

  std::string workspace_;
  std::vector<std::string> bodies_;
};

TEST_F(ConnectionApiTest, CreateListGetAndRevoke) {
  auto created = post_connection(connection_body(
      "aws-prod", kAws, {{"AWS_SECRET_ACCESS_KEY", kAwsSecret}, {"AWS_ACCESS_KEY_ID", kAwsKeyId}}));
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string id = created.str("id");
  std::vector<std::string> keys;
  for (const auto& kv : created.obj()) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"id", "workspaceId", "name", "kind", "provider", "authMode",
                                            "names", "status", "createdAt", "expiresAt", "revokedAt"}));
  EXPECT_EQ(created.str("workspaceId"), workspace_);
  EXPECT_EQ(created.str("provider"), kAws);
  EXPECT_EQ(created.str("authMode"), "env");
  EXPECT_EQ(created.obj().at("names"), (json::array{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}));
  EXPECT_EQ(created.str("status"), "active");
  EXPECT_TRUE(created.obj().at("expiresAt").is_null());
  EXPECT_TRUE(created.obj().at("revokedAt").is_null());

  auto again = post_connection(connection_body("aws-prod", kAws, {{"AWS_ACCESS_KEY_ID", kAwsKeyId}}));
  EXPECT_EQ(again.status, 409u) << again.body;
  EXPECT_EQ(call(http::verb::get, "/api/v1/connections/" + id).json, created.json);
  EXPECT_EQ(call(http::verb::get, "/api/v1/connections/conn_missing").status, 404u);
  auto no_ws = call(http::verb::get, "/api/v1/connections");
  EXPECT_EQ(no_ws.status, 400u);
  EXPECT_EQ(error_code(no_ws), "invalid_argument");
  EXPECT_EQ(call(http::verb::get, "/api/v1/connections?workspaceId=ws_missing").status, 404u);

  auto revoked = call(http::verb::post, "/api/v1/connections/" + id + "/revoke");
  ASSERT_EQ(revoked.status, 200u) << revoked.body;
  EXPECT_EQ(revoked.str("status"), "revoked");
  EXPECT_EQ(revoked.obj().at("revokedAt"), json::value(utc_timestamp(clock_.now_unix())));
  clock_.advance(5);
  auto twice = call(http::verb::post, "/api/v1/connections/" + id + "/revoke");
  EXPECT_EQ(twice.status, 200u);
  EXPECT_EQ(twice.json, revoked.json) << "revoking again changes nothing";

  auto list = call(http::verb::get, "/api/v1/connections?workspaceId=" + workspace_);
  ASSERT_EQ(list.status, 200u) << list.body;
  ASSERT_EQ(list.obj().at("connections").as_array().size(), 1u);
  EXPECT_EQ(list.obj().at("connections").at(0).at("status"), "revoked");
}

TEST_F(ConnectionApiTest, BadRequestsAreRefusedWithoutEchoingAValue) {
  auto reserved = post_connection(connection_body("a", kAws, {{"PATH", kAwsKeyId}}));
  EXPECT_EQ(reserved.status, 400u);
  EXPECT_NE(reserved.body.find("reserved"), std::string::npos) << reserved.body;
  auto shape = post_connection(connection_body("a", kAws, {{"aws_key", kAwsKeyId}}));
  EXPECT_EQ(shape.status, 400u);
  EXPECT_NE(shape.body.find("^[A-Z_][A-Z0-9_]*$"), std::string::npos) << shape.body;
  auto huge = post_connection(connection_body("a", kAws, {{"TOKEN", kAwsKeyId + std::string(70000, 'x')}}));
  EXPECT_EQ(huge.status, 400u);
  EXPECT_NE(huge.body.find("64 KiB"), std::string::npos) << huge.body;
  auto provider = post_connection(connection_body("a", "hashicorp/aws", {{"TOKEN", kAwsKeyId}}));
  EXPECT_EQ(provider.status, 400u);
  EXPECT_NE(provider.body.find("fully qualified"), std::string::npos);
  auto name = post_connection(connection_body("Bad Name", kAws, {{"TOKEN", kAwsKeyId}}));
  EXPECT_EQ(name.status, 400u);
  auto past = connection_body("a", kAws, {{"TOKEN", kAwsKeyId}});
  past["expiresAt"] = clock_.now_unix();
  EXPECT_EQ(post_connection(past).status, 400u);
  auto unknown_ws = connection_body("a", kAws, {{"TOKEN", kAwsKeyId}});
  unknown_ws["workspaceId"] = "ws_missing";
  EXPECT_EQ(post_connection(unknown_ws).status, 404u);

  auto bad_var = post_capsule({{"sensitiveVariables", json::object{{"9x", kDbPassword}}}});
  EXPECT_EQ(bad_var.status, 400u);
  auto twin = post_capsule({{"variables", json::object{{"db_password", "plain"}}},
                            {"sensitiveVariables", json::object{{"db_password", kDbPassword}}}});
  EXPECT_EQ(twin.status, 400u);
  EXPECT_NE(twin.body.find("also a plain variable"), std::string::npos) << twin.body;
  auto not_string = post_capsule({{"sensitiveVariables", json::object{{"db_password", 7}}}});
  EXPECT_EQ(not_string.status, 400u);
}

TEST_F(ConnectionApiTest, AssignmentRules) {
  const std::string aws = aws_connection();
  const std::string gcp = gcp_connection();
  auto created = post_capsule({{"connections", json::array{aws.c_str()}}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");
  EXPECT_EQ(created.obj().at("connections"), (json::array{aws.c_str()}));
  EXPECT_EQ(created.obj().at("sensitiveVariableNames"), json::array{});

  auto both = assign(capsule, {gcp.c_str(), aws.c_str()});
  ASSERT_EQ(both.status, 200u) << both.body;
  EXPECT_EQ(both.obj().at("connections"), (json::array{gcp.c_str(), aws.c_str()}));
  EXPECT_EQ(call(http::verb::get, "/api/v1/capsules/" + capsule).obj().at("connections"),
            both.obj().at("connections"));

  auto other = post_connection(connection_body("aws-staging", kAws, {{"AWS_ACCESS_KEY_ID", kAwsKeyId}}));
  ASSERT_EQ(other.status, 201u);
  auto twice = assign(capsule, {aws.c_str(), other.str("id").c_str()});
  EXPECT_EQ(twice.status, 400u);
  EXPECT_EQ(error_code(twice), "invalid_argument");
  for (const std::string& part : {std::string("aws-prod"), std::string("aws-staging"),
                                  std::string("AWS_ACCESS_KEY_ID")})
    EXPECT_NE(twice.body.find(part), std::string::npos) << twice.body;

  const std::string elsewhere = create_workspace("elsewhere");
  auto foreign_body = connection_body("aws", kAws, {{"AWS_ACCESS_KEY_ID", kAwsKeyId}});
  foreign_body["workspaceId"] = elsewhere;
  auto foreign = post_connection(foreign_body);
  ASSERT_EQ(foreign.status, 201u) << foreign.body;
  auto cross = assign(capsule, {foreign.str("id").c_str()});
  EXPECT_EQ(cross.status, 400u);
  EXPECT_EQ(cross.body.find(elsewhere), std::string::npos) << cross.body;
  EXPECT_NE(cross.body.find(foreign.str("id")), std::string::npos) << cross.body;

  // Unknown is refused exactly as another Workspace's Connection: ids cannot be probed.
  auto missing = assign(capsule, {"conn_missing"});
  EXPECT_EQ(missing.status, 400u) << missing.body;
  EXPECT_NE(missing.body.find("connection conn_missing is not a Connection of the capsule's workspace"),
            std::string::npos) << missing.body;
  EXPECT_EQ(assign(capsule, {aws.c_str(), aws.c_str()}).status, 400u);
  ASSERT_EQ(call(http::verb::post, "/api/v1/connections/" + other.str("id") + "/revoke").status, 200u);
  auto inactive = assign(capsule, {other.str("id").c_str()});
  EXPECT_EQ(inactive.status, 409u);
  EXPECT_EQ(error_code(inactive), "connection_revoked");
  EXPECT_EQ(call(http::verb::get, "/api/v1/capsules/" + capsule).obj().at("connections"),
            both.obj().at("connections"))
      << "a refused assignment changes nothing";
  auto cleared = assign(capsule, {});
  EXPECT_EQ(cleared.obj().at("connections"), json::array{});
}

TEST_F(ConnectionApiTest, ManifestCarriesTheSecretsSealedToTheClaimingAgent) {
  const std::string aws = aws_connection();
  const std::string gcp = gcp_connection();
  auto created = post_capsule({{"connections", json::array{aws.c_str(), gcp.c_str()}},
                               {"variables", json::object{{"region", "eu"}}},
                               {"sensitiveVariables", json::object{{"db_password", kDbPassword}}}});
  ASSERT_EQ(created.status, 201u) << created.body;
  EXPECT_EQ(created.obj().at("sensitiveVariableNames"), (json::array{"db_password"}));
  ASSERT_EQ(plan(created.str("id")).status, 201u);

  auto [job, manifest] = claim();
  bodies_.push_back(json::serialize(job));
  EXPECT_EQ(manifest.variables, (protocol::Variables{{"region", "eu"}}));
  ASSERT_FALSE(manifest.sealed_secrets.empty());
  auto sealed = base64_decode(manifest.sealed_secrets);
  ASSERT_TRUE(sealed);
  EXPECT_FALSE(crypto::open_sealed(*sealed, crypto::BoxKeyPair::generate())) << "only this agent";
  auto text = crypto::open_sealed(*sealed, box_);
  ASSERT_TRUE(text) << text.error().to_string();
  auto bundle = protocol::parse_secret_bundle(text->reveal_as_string());
  ASSERT_TRUE(bundle) << bundle.error().to_string();
  ASSERT_EQ(bundle->connections.size(), 2u);
  const auto& first = bundle->connections[0];
  EXPECT_EQ(first.id, aws);
  EXPECT_EQ(first.name, "aws-prod");
  EXPECT_EQ(first.provider, kAws);
  EXPECT_EQ(first.mode, protocol::AuthMode::env);
  ASSERT_EQ(first.values.size(), 2u);
  EXPECT_EQ(first.values.at("AWS_ACCESS_KEY_ID").reveal_as_string(), kAwsKeyId);
  EXPECT_EQ(first.values.at("AWS_SECRET_ACCESS_KEY").reveal_as_string(), kAwsSecret);
  const auto& second = bundle->connections[1];
  EXPECT_EQ(second.id, gcp);
  EXPECT_EQ(second.mode, protocol::AuthMode::files);
  EXPECT_EQ(second.values.at("GOOGLE_CREDENTIALS").reveal_as_string(), kGcpJson);
  ASSERT_EQ(bundle->sensitive_variables.size(), 1u);
  EXPECT_EQ(bundle->sensitive_variables.at("db_password").reveal_as_string(), kDbPassword);

  // Replacing the sensitive variables replaces the whole set.
  auto replaced = call(http::verb::put, "/api/v1/capsules/" + created.str("id") + "/sensitive-variables",
                       json::object{{"sensitiveVariables", json::object{{"api_key", kDbPassword}}}});
  ASSERT_EQ(replaced.status, 200u) << replaced.body;
  EXPECT_EQ(replaced.obj().at("sensitiveVariableNames"), (json::array{"api_key"}));
  auto twin = call(http::verb::put, "/api/v1/capsules/" + created.str("id") + "/sensitive-variables",
                   json::object{{"sensitiveVariables", json::object{{"region", kDbPassword}}}});
  EXPECT_EQ(twin.status, 400u);
}

TEST_F(ConnectionApiTest, CapsuleWithoutSecretsGetsNoSecretsField) {
  const std::string capsule = create_capsule(workspace_, "plain");
  ASSERT_EQ(plan(capsule).status, 201u);
  auto [job, manifest] = claim();
  EXPECT_TRUE(manifest.sealed_secrets.empty());
}

TEST_F(ConnectionApiTest, RevokedConnectionRefusesNewRunsAndFailsQueuedOnes) {
  const std::string aws = aws_connection();
  auto created = post_capsule({{"connections", json::array{aws.c_str()}}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");
  plan_and_apply(capsule, "state-1");
  const std::string gen1 = json::value_to<std::string>(state_versions(capsule)[0].at("id"));
  auto planned = plan(capsule);
  ASSERT_EQ(planned.status, 201u);
  complete_plan(claim_job());
  auto queued = plan(capsule);
  ASSERT_EQ(queued.status, 201u);

  ASSERT_EQ(call(http::verb::post, "/api/v1/connections/" + aws + "/revoke").status, 200u);
  const std::vector<Reply> refused{
      plan(capsule),
      call(http::verb::post, "/api/v1/runs/" + planned.str("id") + "/apply"),
      call(http::verb::delete_, "/api/v1/capsules/" + capsule),
      call(http::verb::post, "/api/v1/capsules/" + capsule + "/drift-check"),
      call(http::verb::post, "/api/v1/workspaces/" + workspace_ + "/drift-check"),
      call(http::verb::post, "/api/v1/state-versions/" + gen1 + "/rollback-plan")};
  for (const auto& r : refused) {
    EXPECT_EQ(r.status, 409u) << r.body;
    EXPECT_EQ(error_code(r), "connection_revoked") << r.body;
    EXPECT_NE(r.body.find("aws-prod"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find(aws), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("assign an active Connection"), std::string::npos) << r.body;
  }

  // The Run queued before the revocation fails when claimed, and the claim moves on.
  EXPECT_TRUE(claim_nothing().empty());
  auto failed = get_run(queued.str("id"));
  EXPECT_EQ(failed.str("status"), "failed");
  EXPECT_EQ(failed.obj().at("failure").at("code"), "connection_revoked");
  EXPECT_NE(failed.body.find(aws), std::string::npos);
  EXPECT_EQ(get_run(planned.str("id")).str("status"), "succeeded") << "past Runs are untouched";

  const std::string replacement = aws_connection("aws-prod-2");
  ASSERT_EQ(assign(capsule, {replacement.c_str()}).status, 200u);
  EXPECT_EQ(plan(capsule).status, 201u);
}

TEST_F(ConnectionApiTest, ExpiredConnectionRefusesRunsLikeARevokedOne) {
  auto body = connection_body("aws-temp", kAws, {{"AWS_ACCESS_KEY_ID", kAwsKeyId}});
  // A time is given and answered as RFC 3339; seconds since the epoch are still read.
  body["expiresAt"] = utc_timestamp(clock_.now_unix() + 100);
  auto conn = post_connection(body);
  ASSERT_EQ(conn.status, 201u) << conn.body;
  EXPECT_EQ(conn.obj().at("expiresAt"), json::value(utc_timestamp(clock_.now_unix() + 100)));
  auto by_seconds = connection_body("aws-temp-2", kAws, {{"AWS_ACCESS_KEY_ID", kAwsKeyId}});
  by_seconds["expiresAt"] = clock_.now_unix() + 100;
  EXPECT_EQ(post_connection(by_seconds).obj().at("expiresAt"), json::value(utc_timestamp(clock_.now_unix() + 100)));
  auto garbled = connection_body("aws-temp-3", kAws, {{"AWS_ACCESS_KEY_ID", kAwsKeyId}});
  garbled["expiresAt"] = "tomorrow";
  auto unreadable = post_connection(garbled);
  EXPECT_EQ(unreadable.status, 400u) << unreadable.body;
  EXPECT_NE(unreadable.body.find("RFC 3339"), std::string::npos) << unreadable.body;
  auto created = post_capsule({{"connections", json::array{conn.str("id").c_str()}}});
  ASSERT_EQ(created.status, 201u);
  auto queued = plan(created.str("id"));
  ASSERT_EQ(queued.status, 201u);

  clock_.advance(100);
  EXPECT_EQ(call(http::verb::get, "/api/v1/connections/" + conn.str("id")).str("status"), "expired");
  EXPECT_TRUE(claim_nothing().empty());
  auto failed = get_run(queued.str("id"));
  EXPECT_EQ(failed.obj().at("failure").at("code"), "connection_expired");
  auto refused = plan(created.str("id"));
  EXPECT_EQ(refused.status, 409u);
  EXPECT_EQ(error_code(refused), "connection_expired");
  EXPECT_NE(refused.body.find("aws-temp"), std::string::npos);
}

TEST_F(ConnectionApiTest, DataDirectoryNeverHoldsAPlantedValue) {
  const std::string aws = aws_connection();
  const std::string gcp = gcp_connection();
  auto created = post_capsule({{"connections", json::array{aws.c_str(), gcp.c_str()}},
                               {"sensitiveVariables", json::object{{"db_password", kDbPassword}}}});
  ASSERT_EQ(created.status, 201u) << created.body;
  ASSERT_EQ(plan(created.str("id")).status, 201u);
  auto [job, manifest] = claim();
  ASSERT_FALSE(manifest.sealed_secrets.empty());
  ASSERT_EQ(call(http::verb::post, "/api/v1/connections/" + aws + "/revoke").status, 200u);
  EXPECT_EQ(call(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/activity").status, 200u);

  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path() / "data")) {
    if (!entry.is_regular_file()) continue;
    auto content = read_file(entry.path(), 64 << 20);
    ASSERT_TRUE(content);
    for (const auto& value : kPlanted)
      EXPECT_EQ(content->find(value), std::string::npos) << entry.path() << " holds " << value;
  }
}

}  // namespace
}  // namespace takosumi::controlplane
