// A long-poll claim whose agent has gone never takes a job: the Run goes to the next live agent at
// once, as its first attempt, instead of sitting out a lease on a dead connection.
#include "controlplane/testing/http_api_fixture.hpp"
#include "controlplane/testing/http_wire.hpp"
#include "controlplane/testing/http_raw_client.hpp"

namespace takosumi::controlplane {
namespace {

using raw::tcp;

class ClaimDisconnectTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    const auto sign = crypto::SignKeyPair::generate();
    const auto box = crypto::BoxKeyPair::generate();
    auto ghost = send_registration(registration_body(honest_claim("ghost", sign, box), sign));
    ASSERT_EQ(ghost.status, 200u) << ghost.body;
    ghost_token_ = ghost.str("agentToken");
  }

  // Starts a 30 s long poll as the ghost agent and leaves: FIN, or RST when reset.
  void long_poll_and_leave(bool reset) {
    asio::io_context io;
    tcp::socket socket = raw::connect(io, port_);
    http::write(socket, make_request(http::verb::post, "/agent/v1/claim",
                                     R"({"freeSlots":1,"waitSeconds":30})",
                                     {{"authorization", "Bearer " + ghost_token_}}));
    if (reset)
      raw::reset(socket);
    else
      socket.close();
  }

  // Queues a plan and claims it at once (no wait) as the live agent: the job, with its attempt.
  void expect_the_live_agent_gets_it_first_time(const std::string& capsule) {
    auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
    ASSERT_EQ(plan.status, 201u) << plan.body;
    auto r = agent(http::verb::post, "/agent/v1/claim", json::object{{"freeSlots", 1}, {"waitSeconds", 0}});
    ASSERT_EQ(r.status, 200u) << r.body;
    const auto& jobs = r.obj().at("jobs").as_array();
    ASSERT_EQ(jobs.size(), 1u) << "the Run went to the agent that had left: " << r.body;
    EXPECT_EQ(jobs[0].at("runId"), plan.obj().at("id"));
    auto run = api(http::verb::get, "/api/v1/runs/" + plan.str("id"));
    EXPECT_EQ(run.obj().at("attempt"), 1);
    EXPECT_EQ(run.str("status"), "running");
  }

  std::string ghost_token_;
};

TEST_F(ClaimDisconnectTest, AClaimWhoseClientClosedTakesNoJob) {
  const std::string capsule = create_capsule();
  long_poll_and_leave(false);
  expect_the_live_agent_gets_it_first_time(capsule);
}

TEST_F(ClaimDisconnectTest, AClaimWhoseClientResetTakesNoJob) {
  const std::string capsule = create_capsule();
  long_poll_and_leave(true);
  expect_the_live_agent_gets_it_first_time(capsule);
}

// The live agent's own long poll still gets the job the moment it is queued.
TEST_F(ClaimDisconnectTest, ALiveLongPollStillGetsTheJob) {
  const std::string capsule = create_capsule();
  long_poll_and_leave(false);
  Reply polled;
  std::thread poller([&] {
    polled = agent(http::verb::post, "/agent/v1/claim", json::object{{"freeSlots", 1}, {"waitSeconds", 30}});
  });
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  poller.join();
  ASSERT_EQ(polled.status, 200u) << polled.body;
  ASSERT_EQ(polled.obj().at("jobs").as_array().size(), 1u) << polled.body;
  EXPECT_EQ(polled.obj().at("jobs").at(0).at("runId"), plan.obj().at("id"));
}

}  // namespace
}  // namespace takosumi::controlplane
