// The audit trail over the real HTTP API: who did what to which Capsule, Run or Connection,
// newest first and paged, with no value, token or failure message in it; and refusedOutputs on
// the Run JSON.
#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

const std::string kPlantedValue = "planted-activity-value-0005";
const std::string kFailureText = "Error: planted failure text 0006";

class ActivityApiTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    workspace_ = create_workspace();
  }

  Reply activity(const std::string& query = "") {
    auto r = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/activity" + query);
    EXPECT_EQ(r.body.find(kPlantedValue), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find(kFailureText), std::string::npos) << r.body;
    return r;
  }
  static std::vector<std::string> actions(const Reply& r) {
    std::vector<std::string> out;
    for (const auto& e : r.obj().at("events").as_array())
      out.push_back(json::value_to<std::string>(e.at("action")));
    return out;
  }

  std::string workspace_;
};

TEST_F(ActivityApiTest, ListsWhoDidWhatNewestFirstWithoutSecrets) {
  auto conn = api(http::verb::post, "/api/v1/connections",
                  json::object{{"workspaceId", workspace_}, {"name", "gh"},
                               {"provider", "registry.opentofu.org/integrations/github"},
                               {"authMode", "env"},
                               {"values", json::object{{"GITHUB_TOKEN", kPlantedValue}}}});
  ASSERT_EQ(conn.status, 201u) << conn.body;
  const std::string capsule = create_capsule(workspace_, "app");
  ASSERT_EQ(api(http::verb::put, "/api/v1/capsules/" + capsule + "/connections",
                json::object{{"connections", json::array{conn.str("id").c_str()}}}).status, 200u);
  ASSERT_EQ(api(http::verb::put, "/api/v1/capsules/" + capsule + "/sensitive-variables",
                json::object{{"sensitiveVariables", json::object{{"db_password", kPlantedValue}}}})
                .status, 200u);
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(plan.status, 201u);
  AgentJob job = claim_job();
  auto done = agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/complete",
                    json::object{{"leaseToken", job.lease}, {"attempt", job.manifest.attempt},
                                 {"status", "failed"},
                                 {"failure", json::object{{"code", "opentofu_plan_failed"},
                                                          {"message", kFailureText}}}});
  ASSERT_EQ(done.status, 200u) << done.body;
  ASSERT_EQ(api(http::verb::post, "/api/v1/connections/" + conn.str("id") + "/revoke").status, 200u);

  auto all = activity();
  ASSERT_EQ(all.status, 200u) << all.body;
  EXPECT_EQ(actions(all),
            (std::vector<std::string>{"connection.revoked", "run.finished", "run.claimed",
                                      "run.created", "capsule.sensitive_variables_set",
                                      "capsule.connections_set", "capsule.created",
                                      "connection.created", "workspace.created"}));
  EXPECT_TRUE(all.obj().at("nextCursor").is_null());
  const auto& events = all.obj().at("events").as_array();
  std::int64_t previous = INT64_MAX;
  for (const auto& e : events) {
    EXPECT_LT(e.at("id").as_int64(), previous);
    previous = e.at("id").as_int64();
  }
  const std::string api_actor = "admin";
  const std::string agent_actor = "agent:" + agent_id_;
  EXPECT_EQ(events[0].at("actor"), api_actor.c_str());
  EXPECT_EQ(events[0].at("connectionId"), conn.obj().at("id"));
  EXPECT_EQ(events[1].at("actor"), agent_actor.c_str());
  EXPECT_EQ(events[1].at("runId"), plan.obj().at("id"));
  EXPECT_EQ(events[1].at("detail"),
            (json::object{{"status", "failed"}, {"failureCode", "opentofu_plan_failed"}}));
  EXPECT_EQ(events[2].at("detail").at("agentId"), agent_id_.c_str());
  EXPECT_EQ(events[3].at("detail"), (json::object{{"type", "plan"}}));
  EXPECT_EQ(events[3].at("capsuleId"), capsule.c_str());
  EXPECT_EQ(events[4].at("detail"), (json::object{{"names", json::array{"db_password"}}}));
  EXPECT_EQ(events[7].at("detail"),
            (json::object{{"name", "gh"}, {"provider", "registry.opentofu.org/integrations/github"},
                          {"authMode", "env"}, {"names", json::array{"GITHUB_TOKEN"}}}));
  EXPECT_TRUE(events[8].at("capsuleId").is_null());
  EXPECT_TRUE(events[8].at("runId").is_null());
}

TEST_F(ActivityApiTest, PagesWithBeforeAndNextCursor) {
  for (const char* name : {"a", "b", "c", "d"}) create_capsule(workspace_, name);
  auto first = activity("?limit=2");
  ASSERT_EQ(first.status, 200u) << first.body;
  ASSERT_EQ(first.obj().at("events").as_array().size(), 2u);
  ASSERT_TRUE(first.obj().at("nextCursor").is_int64());
  const auto cursor = std::to_string(first.obj().at("nextCursor").as_int64());
  EXPECT_EQ(cursor, std::to_string(first.obj().at("events").at(1).at("id").as_int64()));
  auto second = activity("?limit=2&before=" + cursor);
  ASSERT_EQ(second.obj().at("events").as_array().size(), 2u);
  EXPECT_LT(second.obj().at("events").at(0).at("id").as_int64(), std::stoll(cursor));
  auto last = activity("?limit=2&before=" + std::to_string(second.obj().at("nextCursor").as_int64()));
  EXPECT_EQ(actions(last), (std::vector<std::string>{"workspace.created"}));
  EXPECT_TRUE(last.obj().at("nextCursor").is_null());

  EXPECT_EQ(activity("?limit=0").status, 400u);
  EXPECT_EQ(activity("?limit=201").status, 400u);
  EXPECT_EQ(activity("?before=x").status, 400u);
  EXPECT_EQ(api(http::verb::get, "/api/v1/workspaces/ws_missing/activity").status, 404u);
  // Another Workspace's events stay there.
  create_workspace("other");
  EXPECT_EQ(activity().obj().at("events").as_array().size(), 5u);
}

TEST_F(ActivityApiTest, RunJsonShowsRefusedOutputs) {
  const std::string capsule = create_capsule(workspace_, "app");
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(plan.status, 201u);
  EXPECT_EQ(plan.obj().at("refusedOutputs"), json::array{});
  AgentJob job = claim_job();
  json::array refused{json::object{{"name", "url"}, {"reason", "a URL with a password in its userinfo"}}};
  auto done = agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/complete",
                    json::object{{"leaseToken", job.lease}, {"attempt", job.manifest.attempt},
                                 {"status", "succeeded"}, {"refusedOutputs", refused}});
  ASSERT_EQ(done.status, 200u) << done.body;
  auto run = api(http::verb::get, "/api/v1/runs/" + job.run_id);
  EXPECT_EQ(run.obj().at("refusedOutputs"), refused);
}

}  // namespace
}  // namespace takosumi::controlplane
