// Agent pools over the real HTTP API: the admin makes a pool for some Workspaces and a pool token
// for it, a Capsule of such a Workspace names the pool and labels its Runs need, and only an agent
// registered with that pool's token whose labels (its own and its pool's) cover them is handed its
// Runs. A Workspace the pool is not for cannot name it, and cannot tell it from a pool that does
// not exist; only the admin sees and changes pools. A pool's load says what waits for it.
#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

class AgentPoolApiTest : public HttpApiTest {
 protected:
  // Registers an agent with `pool_token` and `labels` and makes it the fixture's agent (claim()).
  void register_pool_agent(const std::string& name, const std::string& pool_token,
                           const json::array& labels) {
    const crypto::RegistrationClaim c{fetch_challenge(pool_token), name, sign_.public_key,
                                      box_.public_key, crypto::sha256_hex(pool_token),
                                      control_signing_key()};
    auto body = registration_body(c, sign_);
    body["labels"] = labels;
    auto r = send(http::verb::post, "/agent/v1/register", json::serialize(body),
                  {{"authorization", "Bearer " + pool_token}});
    ASSERT_EQ(r.status, 200u) << r.body;
    agent_id_ = r.str("agentId");
    agent_token_ = r.str("agentToken");
  }

  std::size_t claimable() {
    auto r = agent(http::verb::post, "/agent/v1/claim",
                   json::object{{"freeSlots", 2}, {"waitSeconds", 0}});
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200u ? r.obj().at("jobs").as_array().size() : 0;
  }

  json::object pool(const std::string& name) {
    auto r = api(http::verb::get, "/api/v1/agent-pools/" + name);
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200u ? r.obj() : json::object{};
  }

  Reply make_pool(const std::string& name, const json::array& workspaces,
                  const json::array& labels = {}) {
    return api(http::verb::post, "/api/v1/agent-pools",
               json::object{{"name", name}, {"labels", labels}, {"workspaces", workspaces}});
  }

  std::string pool_token(const std::string& pool) {
    auto r = api(http::verb::post, "/api/v1/pool-tokens",
                 json::object{{"name", pool + " agents"}, {"pool", pool}});
    EXPECT_EQ(r.status, 201u) << r.body;
    EXPECT_EQ(r.status == 201u ? r.str("pool") : "", pool);
    return r.status == 201u ? r.str("token") : "";
  }

  Reply capsule_in(const std::string& workspace, const std::string& pool,
                   const json::array& labels) {
    json::object body{
        {"name", "trainer"},
        {"source", json::object{{"gitUrl", "file:///unused"}, {"ref", std::string(40, 'c')}}},
        {"agentPool", pool},
        {"agentLabels", labels}};
    return api(http::verb::post, "/api/v1/workspaces/" + workspace + "/capsules", body);
  }
};

TEST_F(AgentPoolApiTest, APoolIsMadeOnceForNamedWorkspacesWithCheckedLabels) {
  const std::string ws = create_workspace("ml");
  auto made = make_pool("gpu", json::array{ws}, json::array{"gpu", "cuda=12", "gpu"});
  ASSERT_EQ(made.status, 201u) << made.body;
  EXPECT_EQ(made.obj().at("labels"), (json::array{"cuda=12", "gpu"})) << "sorted, once each";
  EXPECT_EQ(made.obj().at("workspaces"), json::array{ws});
  EXPECT_EQ(made.obj().at("queuedRuns").as_int64(), 0);

  EXPECT_EQ(make_pool("gpu", json::array{"*"}).status, 409u);
  auto no_workspaces = api(http::verb::post, "/api/v1/agent-pools", json::object{{"name", "eu"}});
  EXPECT_EQ(no_workspaces.status, 400u) << no_workspaces.body;
  EXPECT_NE(no_workspaces.body.find("\\\"*\\\""), std::string::npos) << no_workspaces.body;
  auto unknown_ws = make_pool("eu", json::array{"ws_nothing"});
  EXPECT_EQ(unknown_ws.status, 400u) << unknown_ws.body;
  auto bad_name = make_pool("GPU pool", json::array{"*"});
  EXPECT_EQ(bad_name.status, 400u) << bad_name.body;
  EXPECT_NE(bad_name.body.find("^[a-z0-9][a-z0-9_-]{0,62}$"), std::string::npos) << bad_name.body;
  auto bad_label = make_pool("eu", json::array{"*"}, json::array{"-x"});
  EXPECT_EQ(bad_label.status, 400u) << bad_label.body;
  EXPECT_NE(bad_label.body.find("labels[0]"), std::string::npos) << bad_label.body;

  auto listed = api(http::verb::get, "/api/v1/agent-pools");
  ASSERT_EQ(listed.status, 200u) << listed.body;
  const auto& pools = listed.obj().at("agentPools").as_array();
  ASSERT_EQ(pools.size(), 2u) << listed.body;
  EXPECT_EQ(pools[0].at("name"), "default");
  EXPECT_EQ(pools[0].at("workspaces"), json::array{"*"});
  EXPECT_EQ(pools[1].at("name"), "gpu");
  EXPECT_EQ(api(http::verb::get, "/api/v1/agent-pools/none").status, 404u);

  auto token_for_nothing = api(http::verb::post, "/api/v1/pool-tokens",
                               json::object{{"name", "x"}, {"pool", "none"}});
  EXPECT_EQ(token_for_nothing.status, 400u) << token_for_nothing.body;
  EXPECT_NE(token_for_nothing.body.find("POST /api/v1/agent-pools"), std::string::npos);
}

TEST_F(AgentPoolApiTest, AWorkspaceThePoolIsNotForCannotNameItOrLearnItExists) {
  const std::string ml = create_workspace("ml");
  const std::string web = create_workspace("web");
  ASSERT_EQ(make_pool("gpu", json::array{ml}).status, 201u);
  auto refused = capsule_in(web, "gpu", {});
  auto absent = capsule_in(web, "nowhere", {});
  EXPECT_EQ(refused.status, 400u) << refused.body;
  EXPECT_EQ(absent.status, 400u) << absent.body;
  auto without_name = [](std::string body, const std::string& pool) {
    return body.replace(body.find(pool), pool.size(), "");
  };
  EXPECT_EQ(without_name(refused.body, "gpu"), without_name(absent.body, "nowhere"))
      << "the same answer whether the pool exists or not";
  EXPECT_EQ(capsule_in(ml, "gpu", {}).status, 201u);

  // Pools are the admin's: a Workspace owner's token neither sees nor changes them.
  auto scoped = api(http::verb::post, "/api/v1/tokens",
                    json::object{{"name", "owner"}, {"roles", json::object{{web, "owner"}}}});
  ASSERT_EQ(scoped.status, 201u) << scoped.body;
  const Headers as_owner{{"authorization", "Bearer " + scoped.str("secret")}};
  EXPECT_EQ(send(http::verb::get, "/api/v1/agent-pools", "", as_owner).status, 403u);
  EXPECT_EQ(send(http::verb::put, "/api/v1/agent-pools/gpu/workspaces",
                 R"({"workspaces":["*"]})", as_owner).status,
            403u);
  EXPECT_EQ(send(http::verb::post, "/api/v1/pool-tokens", R"({"name":"x","pool":"gpu"})", as_owner)
                .status,
            403u);

  auto opened = api(http::verb::put, "/api/v1/agent-pools/gpu/workspaces",
                    json::object{{"workspaces", json::array{ml, web}}});
  ASSERT_EQ(opened.status, 200u) << opened.body;
  EXPECT_EQ(capsule_in(web, "gpu", {}).status, 201u) << "once the admin names it";
}

TEST_F(AgentPoolApiTest, OnlyAnAgentOfThePoolWithEveryLabelIsHandedTheRun) {
  const std::string ws = create_workspace("ml");
  ASSERT_EQ(make_pool("gpu", json::array{ws}, json::array{"gpu"}).status, 201u);
  const std::string gpu_token = pool_token("gpu");
  auto capsule = capsule_in(ws, "gpu", json::array{"gpu", "region=eu"});
  ASSERT_EQ(capsule.status, 201u) << capsule.body;
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + capsule.str("id") + "/plan").status, 201u);
  EXPECT_EQ(pool("gpu").at("queuedRuns").as_int64(), 1);

  register_agent();  // the configured pool token: the default pool
  EXPECT_EQ(claimable(), 0u) << "an agent of another pool";
  register_pool_agent("gpu-us", gpu_token, json::array{"region=us"});
  EXPECT_EQ(claimable(), 0u) << "an agent of the pool without region=eu";
  register_pool_agent("gpu-eu", gpu_token, json::array{"region=eu"});
  EXPECT_EQ(pool("gpu").at("agents").as_int64(), 2);
  auto [job, manifest] = claim();
  EXPECT_EQ(manifest.capsule_id, capsule.str("id")) << "its own region=eu and the pool's gpu";
  EXPECT_EQ(pool("gpu").at("queuedRuns").as_int64(), 0);

  auto agents = api(http::verb::get, "/api/v1/agents");
  ASSERT_EQ(agents.status, 200u);
  for (const auto& a : agents.obj().at("agents").as_array())
    EXPECT_EQ(a.at("pool"), a.at("name") == "worker-1" ? "default" : "gpu") << a;
}

TEST_F(AgentPoolApiTest, ChangingACapsulesRequirementsMovesItsQueuedRuns) {
  const std::string ws = create_workspace("ml");
  ASSERT_EQ(make_pool("gpu", json::array{"*"}).status, 201u);
  auto capsule = capsule_in(ws, "gpu", {});
  ASSERT_EQ(capsule.status, 201u) << capsule.body;
  const std::string id = capsule.str("id");
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + id + "/plan").status, 201u);
  register_agent();
  EXPECT_EQ(claimable(), 0u);

  const std::string target = "/api/v1/capsules/" + id + "/agent-requirements";
  EXPECT_EQ(api(http::verb::put, target, json::object{{"agentPool", "nowhere"}}).status, 400u);
  EXPECT_EQ(api(http::verb::put, target, json::object{{"agentpool", "default"}}).status, 400u);
  auto labels_only = api(http::verb::put, target, json::object{{"agentLabels", json::array{}}});
  EXPECT_EQ(labels_only.status, 400u) << "the pool is required: both are replaced";
  EXPECT_EQ(claimable(), 0u) << "a refused change changes nothing";

  auto moved = api(http::verb::put, target,
                   json::object{{"agentPool", "default"}, {"agentLabels", json::array{"linux"}}});
  ASSERT_EQ(moved.status, 200u) << moved.body;
  EXPECT_EQ(moved.obj().at("agentLabels"), json::array{"linux"});
  EXPECT_EQ(claimable(), 1u) << "worker-1 has the label linux";
}

}  // namespace
}  // namespace takosumi::controlplane
