// Two agents on one control plane never run the same Run; an agent given several control-plane
// URLs (controlPlane.urls) goes on through the one that answers.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <set>

#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

TEST(TwoAgents, EveryRunIsClaimedExactlyOnce) {
  Stack stack(StackOptions{.agents = 2, .concurrency = 2});
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", R"(resource "terraform_data" "x" { input = "a" }
output "v" { value = "a" })"}});
  std::vector<std::string> runs;
  for (int i = 0; i < 6; ++i) {
    auto capsule = stack.create_capsule(repo.url(), {}, {}, "c" + std::to_string(i));
    auto r = stack.api().post("/api/v1/capsules/" + capsule + "/plan", json::object{});
    ASSERT_EQ(r.status, 201u) << r.body;
    runs.push_back(json::value_to<std::string>(r.json.at("id")));
  }
  for (const auto& id : runs) {
    auto run = stack.wait_run(id);
    EXPECT_EQ(json::value_to<std::string>(run.at("status")), "succeeded") << json::serialize(run);
    EXPECT_EQ(run.at("attempt").as_int64(), 1) << "run " << id << " was claimed more than once";
  }
  // Each run's log shows exactly one attempt's output.
  for (const auto& id : runs) {
    auto logs = stack.api().get("/api/v1/runs/" + id + "/logs");
    ASSERT_EQ(logs.status, 200u);
    for (const auto& chunk : logs.json.at("chunks").as_array())
      EXPECT_EQ(chunk.at("attempt").as_int64(), 1);
  }
}

// A loopback port nobody listens on (bound, then closed): connections to it are refused.
std::uint16_t closed_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

TEST(TwoAgents, AnAgentFailsOverToTheReplicaThatAnswers) {
  Stack stack(StackOptions{.agents = 0});
  const std::string down = "http://127.0.0.1:" + std::to_string(closed_port());
  const std::string up = "http://127.0.0.1:" + std::to_string(stack.port());
  stack.set_agent_control_plane(0, "controlPlane:\n  urls: [" + down + ", " + up + "]\n");
  stack.start_agent(0);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", R"(resource "terraform_data" "x" { input = "a" })"}});
  auto capsule = stack.create_capsule(repo.url(), {}, {});
  auto r = stack.api().post("/api/v1/capsules/" + capsule + "/plan", json::object{});
  ASSERT_EQ(r.status, 201u) << r.body;
  auto run = stack.wait_run(json::value_to<std::string>(r.json.at("id")));
  EXPECT_EQ(json::value_to<std::string>(run.at("status")), "succeeded") << json::serialize(run);
  const std::string log = stack.agent_log(0);
  EXPECT_NE(log.find("control plane " + down), std::string::npos) << log;
  EXPECT_NE(log.find("using " + up + " from now on"), std::string::npos) << log;
}

}  // namespace
}  // namespace takosumi::testing
