// Two control-plane replicas on one PostgreSQL store, over real HTTP (the pg.* run only): an agent
// registers at one with a challenge from the other, and a Run's plan, apply and next plan hop
// between them, each replica reading the blobs the other stored through the database.
#include <gtest/gtest.h>

#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

class ReplicasTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    ASSERT_TRUE(testing::testing_on_postgres()) << "replicas share a PostgreSQL store only";
    port_a_ = port_;
    // The second replica: a data directory of its own with the first one's keys (what an
    // operator distributes), the same store.
    std::filesystem::create_directories(dir_.path() / "data-b");
    std::filesystem::copy(dir_.path() / "data" / "keys", dir_.path() / "data-b" / "keys");
    ControlConfig cfg = test_config(dir_.path() / "data-b");
    cfg.store_driver = StoreDriver::postgres;
    cfg.postgres = store_config_.postgres;
    auto b = ControlPlane::create(std::move(cfg), clock_);
    ASSERT_TRUE(b) << b.error().to_string();
    replica_b_ = std::move(*b);
    auto port = replica_b_->listen();
    ASSERT_TRUE(port) << port.error().to_string();
    port_b_ = *port;
    server_b_ = std::thread([this] { replica_b_->run(); });
  }

  void TearDown() override {
    if (replica_b_) replica_b_->stop();
    if (server_b_.joinable()) server_b_.join();
    HttpApiTest::TearDown();
  }

  void at_a() { port_ = port_a_; }
  void at_b() { port_ = port_b_; }

  std::unique_ptr<ControlPlane> replica_b_;
  std::thread server_b_;
  std::uint16_t port_a_ = 0;
  std::uint16_t port_b_ = 0;
};

TEST_F(ReplicasTest, ARunsPlanApplyAndNextPlanHopBetweenReplicas) {
  at_a();
  const json::object body = registration_body(honest_claim("worker-1", sign_, box_), sign_);
  at_b();  // the challenge came from A
  auto registered = send_registration(body);
  ASSERT_EQ(registered.status, 200u) << registered.body;
  agent_id_ = registered.str("agentId");
  agent_token_ = registered.str("agentToken");
  at_a();
  EXPECT_EQ(error_code(send_registration(body)), "registration_challenge_invalid")
      << "the challenge is used up on every replica";

  const std::string capsule = create_capsule();
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(plan.status, 201u) << plan.body;
  at_b();
  AgentJob planned = claim_job();
  ASSERT_EQ(planned.run_id, plan.str("id"));
  complete_plan(planned);  // the saved plan lands in B's blobs/ and the database

  at_a();  // A admits the apply and re-seals the plan B stored
  auto apply = apply_run(plan.str("id"));
  ASSERT_EQ(apply.status, 201u) << apply.body;
  AgentJob applying = claim_job();
  ASSERT_TRUE(applying.manifest.saved_plan);
  auto saved = download(applying.run_id, applying.lease, "plan");
  ASSERT_EQ(saved.status, 200u) << saved.body;
  EXPECT_EQ(open(saved.body, applying.manifest.saved_plan->sealed_dek, "plan"),
            "saved plan of " + planned.run_id);
  const std::string state_text = R"({"version":4,"serial":1,"lineage":"lineage-1"})";
  complete_apply(applying, state_text);  // the state lands in A's blobs/ and the database

  at_b();  // B sees the StateVersion and hands out the state A stored
  EXPECT_EQ(state_versions(capsule).size(), 1u);
  auto next = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(next.status, 201u) << next.body;
  AgentJob next_plan = claim_job();
  ASSERT_TRUE(next_plan.manifest.prior_state);
  EXPECT_EQ(next_plan.manifest.prior_state->generation, 1);
  auto prior = download(next_plan.run_id, next_plan.lease, "prior_state");
  ASSERT_EQ(prior.status, 200u) << prior.body;
  EXPECT_EQ(open(prior.body, next_plan.manifest.prior_state->sealed_dek, "state"), state_text);
}

}  // namespace
}  // namespace takosumi::controlplane
