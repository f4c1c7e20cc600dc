// Agent pools over the real HTTP API: the admin makes a pool and a pool token for it, a Capsule
// names the pool and labels its Runs need, and only an agent registered with that pool's token
// whose labels (its own and its pool's) cover them is handed its Runs. A pool's load says what
// waits for it.
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

  std::string pool_token(const std::string& pool) {
    auto r = api(http::verb::post, "/api/v1/pool-tokens",
                 json::object{{"name", pool + " agents"}, {"pool", pool}});
    EXPECT_EQ(r.status, 201u) << r.body;
    EXPECT_EQ(r.status == 201u ? r.str("pool") : "", pool);
    return r.status == 201u ? r.str("token") : "";
  }

  std::string gpu_capsule(const json::array& labels) {
    auto ws = create_workspace();
    json::object body{
        {"name", "trainer"},
        {"source", json::object{{"gitUrl", "file:///unused"}, {"ref", std::string(40, 'c')}}},
        {"agentPool", "gpu"},
        {"agentLabels", labels}};
    auto r = api(http::verb::post, "/api/v1/workspaces/" + ws + "/capsules", body);
    EXPECT_EQ(r.status, 201u) << r.body;
    if (r.status != 201u) return "";
    EXPECT_EQ(r.str("agentPool"), "gpu");
    return r.str("id");
  }
};

TEST_F(AgentPoolApiTest, APoolIsMadeOnceWithCheckedLabelsAndListedBesideTheDefault) {
  auto made = api(http::verb::post, "/api/v1/agent-pools",
                  json::object{{"name", "gpu"}, {"labels", json::array{"gpu", "cuda=12", "gpu"}}});
  ASSERT_EQ(made.status, 201u) << made.body;
  EXPECT_EQ(made.obj().at("labels"), (json::array{"cuda=12", "gpu"})) << "sorted, once each";
  EXPECT_EQ(made.obj().at("queuedRuns").as_int64(), 0);

  auto again = api(http::verb::post, "/api/v1/agent-pools", json::object{{"name", "gpu"}});
  EXPECT_EQ(again.status, 409u) << again.body;
  auto bad_name = api(http::verb::post, "/api/v1/agent-pools", json::object{{"name", "GPU pool"}});
  EXPECT_EQ(bad_name.status, 400u) << bad_name.body;
  EXPECT_NE(bad_name.body.find("^[a-z0-9][a-z0-9_-]{0,62}$"), std::string::npos) << bad_name.body;
  auto bad_label = api(http::verb::post, "/api/v1/agent-pools",
                       json::object{{"name", "eu"}, {"labels", json::array{"-x"}}});
  EXPECT_EQ(bad_label.status, 400u) << bad_label.body;
  EXPECT_NE(bad_label.body.find("labels[0]"), std::string::npos) << bad_label.body;

  auto listed = api(http::verb::get, "/api/v1/agent-pools");
  ASSERT_EQ(listed.status, 200u) << listed.body;
  const auto& pools = listed.obj().at("agentPools").as_array();
  ASSERT_EQ(pools.size(), 2u) << listed.body;
  EXPECT_EQ(pools[0].at("name"), "default");
  EXPECT_EQ(pools[1].at("name"), "gpu");
  EXPECT_EQ(api(http::verb::get, "/api/v1/agent-pools/none").status, 404u);

  auto token_for_nothing = api(http::verb::post, "/api/v1/pool-tokens",
                               json::object{{"name", "x"}, {"pool", "none"}});
  EXPECT_EQ(token_for_nothing.status, 400u) << token_for_nothing.body;
  EXPECT_NE(token_for_nothing.body.find("POST /api/v1/agent-pools"), std::string::npos);
  auto capsule_for_nothing = api(
      http::verb::post, "/api/v1/workspaces/" + create_workspace() + "/capsules",
      json::object{{"name", "app"},
                   {"source", json::object{{"gitUrl", "file:///x"}, {"ref", std::string(40, 'c')}}},
                   {"agentPool", "none"}});
  EXPECT_EQ(capsule_for_nothing.status, 400u) << capsule_for_nothing.body;
  EXPECT_NE(capsule_for_nothing.body.find("agentPool"), std::string::npos);
}

TEST_F(AgentPoolApiTest, OnlyAnAgentOfThePoolWithEveryLabelIsHandedTheRun) {
  ASSERT_EQ(api(http::verb::post, "/api/v1/agent-pools",
                json::object{{"name", "gpu"}, {"labels", json::array{"gpu"}}})
                .status,
            201u);
  const std::string gpu_token = pool_token("gpu");
  const std::string capsule = gpu_capsule(json::array{"gpu", "region=eu"});
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan").status, 201u);
  EXPECT_EQ(pool("gpu").at("queuedRuns").as_int64(), 1);

  register_agent();  // the configured pool token: the default pool
  EXPECT_EQ(claimable(), 0u) << "an agent of another pool";
  register_pool_agent("gpu-us", gpu_token, json::array{"region=us"});
  EXPECT_EQ(claimable(), 0u) << "an agent of the pool without region=eu";
  register_pool_agent("gpu-eu", gpu_token, json::array{"region=eu"});
  EXPECT_EQ(pool("gpu").at("agents").as_int64(), 2);
  auto [job, manifest] = claim();
  EXPECT_EQ(manifest.capsule_id, capsule) << "its own region=eu and the pool's gpu";
  EXPECT_EQ(pool("gpu").at("queuedRuns").as_int64(), 0);

  auto agents = api(http::verb::get, "/api/v1/agents");
  ASSERT_EQ(agents.status, 200u);
  for (const auto& a : agents.obj().at("agents").as_array())
    EXPECT_EQ(a.at("pool"), a.at("name") == "worker-1" ? "default" : "gpu") << a;
}

TEST_F(AgentPoolApiTest, ChangingACapsulesRequirementsMovesItsQueuedRuns) {
  ASSERT_EQ(api(http::verb::post, "/api/v1/agent-pools", json::object{{"name", "gpu"}}).status,
            201u);
  const std::string capsule = gpu_capsule(json::array{});
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan").status, 201u);
  register_agent();
  EXPECT_EQ(claimable(), 0u);

  auto unknown = api(http::verb::put, "/api/v1/capsules/" + capsule + "/agent-requirements",
                     json::object{{"agentPool", "nowhere"}});
  EXPECT_EQ(unknown.status, 400u) << unknown.body;
  auto misspelt = api(http::verb::put, "/api/v1/capsules/" + capsule + "/agent-requirements",
                      json::object{{"agentpool", "default"}});
  EXPECT_EQ(misspelt.status, 400u) << misspelt.body;
  EXPECT_EQ(claimable(), 0u) << "a refused change changes nothing";

  auto moved = api(http::verb::put, "/api/v1/capsules/" + capsule + "/agent-requirements",
                   json::object{{"agentPool", "default"}, {"agentLabels", json::array{"linux"}}});
  ASSERT_EQ(moved.status, 200u) << moved.body;
  EXPECT_EQ(moved.obj().at("agentLabels"), json::array{"linux"});
  EXPECT_EQ(claimable(), 1u) << "worker-1 has the label linux";
}

}  // namespace
}  // namespace takosumi::controlplane
