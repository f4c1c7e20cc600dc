// Request bodies are read strictly on both APIs: a duplicate key or an unknown field is
// 400 invalid_argument naming it, and nothing is created or changed.
#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

std::string message(const Reply& r) {
  if (!r.json.is_object() || !r.obj().contains("error")) return "";
  return json::value_to<std::string>(r.obj().at("error").at("message"));
}

class StrictBodyTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    workspace_ = create_workspace();
  }

  // Expects 400 invalid_argument with `fragment` in the message.
  void expect_refused(const Reply& r, const std::string& fragment) {
    EXPECT_EQ(r.status, 400u) << r.body;
    EXPECT_EQ(error_code(r), "invalid_argument") << r.body;
    EXPECT_NE(message(r).find(fragment), std::string::npos) << "want \"" << fragment << "\" in " << r.body;
  }
  Reply raw_api(http::verb verb, const std::string& target, std::string text) {
    return send(verb, target, std::move(text));
  }
  Reply raw_agent(const std::string& target, std::string text) {
    return send(http::verb::post, target, std::move(text), {{"authorization", "Bearer " + agent_token_}});
  }
  json::object capsule_body() {
    return {{"name", "app"},
            {"source", json::object{{"gitUrl", "file:///unused"}, {"ref", std::string(40, 'c')}}},
            {"outputAllowlist", json::object{{"url", json::object{{"from", "app_url"}}}}}};
  }
  std::size_t capsule_count() {
    auto r = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/capsules");
    return r.obj().at("capsules").as_array().size();
  }

  std::string workspace_;
};

TEST_F(StrictBodyTest, DuplicateKeysAreRefusedNamingTheKey) {
  expect_refused(raw_api(http::verb::post, "/api/v1/workspaces", R"({"name":"a","name":"b"})"),
                 "duplicate key \"name\"");
  expect_refused(raw_api(http::verb::post, "/api/v1/workspaces/" + workspace_ + "/capsules",
                         R"({"name":"app","source":{"gitUrl":"file:///x","ref":"main",)"
                         R"("ref":"evil"}})"),
                 "duplicate key \"ref\" in source");
  EXPECT_EQ(capsule_count(), 0u);
  expect_refused(raw_api(http::verb::post, "/api/v1/connections",
                         R"({"workspaceId":")" + workspace_ +
                             R"(","name":"c","provider":"registry.opentofu.org/hashicorp/aws",)"
                             R"("authMode":"env","values":{"TOKEN":"one","TOKEN":"two"}})"),
                 "duplicate key \"TOKEN\" in values");
  expect_refused(raw_agent("/agent/v1/claim", R"({"freeSlots":1,"freeSlots":0})"),
                 "duplicate key \"freeSlots\"");
  expect_refused(raw_agent("/agent/v1/runs/run_x/heartbeat", R"({"leaseToken":"a","leaseToken":"b"})"),
                 "duplicate key \"leaseToken\"");
  expect_refused(raw_agent("/agent/v1/runs/run_x/complete",
                           R"({"leaseToken":"a","attempt":1,"status":"failed","status":"succeeded"})"),
                 "duplicate key \"status\"");
  expect_refused(send(http::verb::post, "/agent/v1/register",
                      R"({"name":"w","name":"worker-1","boxPublicKey":"x","signPublicKey":"y"})",
                      {{"authorization", std::string("Bearer ") + kPoolToken}}),
                 "duplicate key \"name\"");
}

TEST_F(StrictBodyTest, UnknownFieldsInACapsuleAreRefusedNamingThem) {
  auto misspelt = capsule_body();
  misspelt["outputAllowList"] = misspelt["outputAllowlist"];
  misspelt.erase("outputAllowlist");
  const std::string capsules = "/api/v1/workspaces/" + workspace_ + "/capsules";
  expect_refused(api(http::verb::post, capsules, misspelt), "unknown field \"outputAllowList\"");
  auto source = capsule_body();
  source["source"].as_object()["rev"] = "main";
  expect_refused(api(http::verb::post, capsules, source), "unknown field \"source.rev\"");
  auto mapping = capsule_body();
  mapping["outputAllowlist"].as_object()["url"].as_object()["form"] = "x";
  expect_refused(api(http::verb::post, capsules, mapping), "unknown field \"outputAllowlist.url.form\"");
  auto policy = capsule_body();
  policy["policy"] = json::object{{"allowProvisoners", true}};
  expect_refused(api(http::verb::post, capsules, policy), "unknown field \"policy.allowProvisoners\"");
  EXPECT_EQ(capsule_count(), 0u);
  EXPECT_EQ(api(http::verb::post, capsules, capsule_body()).status, 201u);
}

TEST_F(StrictBodyTest, UnknownFieldsAreRefusedOnEveryPublicEndpoint) {
  const std::string capsule = create_capsule(workspace_, "app2");
  const std::string c = "/api/v1/capsules/" + capsule;
  expect_refused(api(http::verb::post, "/api/v1/workspaces", json::object{{"name", "b"}, {"label", "x"}}),
                 "unknown field \"label\"");
  expect_refused(api(http::verb::put, c + "/policy", json::object{{"network", "none"}, {"net", "x"}}),
                 "unknown field \"policy.net\"");
  expect_refused(api(http::verb::put, c + "/connections",
                     json::object{{"connections", json::array{}}, {"connection", json::array{}}}),
                 "unknown field \"connection\"");
  expect_refused(api(http::verb::put, c + "/sensitive-variables",
                     json::object{{"sensitiveVariables", json::object{}}, {"variables", json::object{}}}),
                 "unknown field \"variables\"");
  expect_refused(api(http::verb::post, "/api/v1/connections",
                     json::object{{"workspaceId", workspace_}, {"name", "c"},
                                  {"provider", "registry.opentofu.org/hashicorp/aws"},
                                  {"authMode", "env"}, {"values", json::object{{"TOKEN", "v"}}},
                                  {"expires", 1}}),
                 "unknown field \"expires\"");
  // Endpoints without a body take nothing but {}.
  expect_refused(api(http::verb::post, c + "/plan", json::object{{"wait", true}}), "unknown field \"wait\"");
  expect_refused(api(http::verb::post, c + "/drift-check", json::object{{"x", 1}}), "unknown field \"x\"");
  auto runs = api(http::verb::get, c + "/runs");
  EXPECT_EQ(runs.obj().at("runs").as_array().size(), 0u);
  auto plan = api(http::verb::post, c + "/plan");
  ASSERT_EQ(plan.status, 201u) << plan.body;
  const std::string run = "/api/v1/runs/" + plan.str("id");
  expect_refused(api(http::verb::post, run + "/cancel", json::object{{"force", true}}), "unknown field \"force\"");
  expect_refused(api(http::verb::post, run + "/apply", json::object{{"acceptDataloss", true}}),
                 "unknown field \"acceptDataloss\"");
  EXPECT_EQ(api(http::verb::get, run).str("status"), "queued");
}

TEST_F(StrictBodyTest, UnknownFieldsAreRefusedOnTheAgentApi) {
  auto plan = api(http::verb::post, "/api/v1/capsules/" + create_capsule(workspace_, "app3") + "/plan");
  ASSERT_EQ(plan.status, 201u);
  expect_refused(agent(http::verb::post, "/agent/v1/claim", json::object{{"freeSlot", 1}}),
                 "unknown field \"freeSlot\"");
  AgentJob job = claim_job();  // the claim above took nothing
  ASSERT_EQ(job.run_id, plan.str("id"));
  const std::string r = "/agent/v1/runs/" + job.run_id;
  expect_refused(agent(http::verb::post, r + "/heartbeat", json::object{{"leaseToken", job.lease}, {"ttl", 5}}),
                 "unknown field \"ttl\"");
  expect_refused(agent(http::verb::post, r + "/logs",
                       json::object{{"leaseToken", job.lease}, {"seq", 0}, {"text", "x"}, {"stream", "err"}}),
                 "unknown field \"stream\"");
  expect_refused(agent(http::verb::post, r + "/phase",
                       json::object{{"leaseToken", job.lease}, {"attempt", 1}, {"phase", "apply"}, {"at", 1}}),
                 "unknown field \"at\"");
  expect_refused(agent(http::verb::post, r + "/complete",
                       json::object{{"leaseToken", job.lease}, {"attempt", 1}, {"status", "succeeded"},
                                    {"planDigst", std::string(64, 'a')}}),
                 "unknown field \"planDigst\"");
  expect_refused(agent(http::verb::post, r + "/complete",
                       json::object{{"leaseToken", job.lease}, {"attempt", 1}, {"status", "failed"},
                                    {"failure", json::object{{"code", "x"}, {"detail", "y"}}}}),
                 "unknown field \"failure.detail\"");
  EXPECT_EQ(api(http::verb::get, "/api/v1/runs/" + job.run_id).str("status"), "running");
  // The pool token travels in the header now; one in the body is an unknown field.
  expect_refused(send(http::verb::post, "/agent/v1/register",
                      json::serialize(json::object{{"poolToken", kPoolToken}, {"name", "w2"},
                                                   {"boxPublicKey", box_.public_key.to_base64()},
                                                   {"signPublicKey", sign_.public_key.to_base64()}}),
                      {{"authorization", std::string("Bearer ") + kPoolToken}}),
                 "unknown field \"poolToken\"");
}

}  // namespace
}  // namespace takosumi::controlplane
