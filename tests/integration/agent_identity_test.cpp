// A real agent proves its key when it registers: a restarted agent with its key keeps its id; an
// agent whose key changed is refused, says what the operator must do and exits instead of
// looping, logging the body of the reset that admits its key; after the operator's reset naming
// that key (printed by --print-public-key) it registers under the same id and runs Runs; an agent
// pinning another control plane's key cannot register.
#include <gtest/gtest.h>

#include <regex>

#include "crypto/keys.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

// The agent ids the agent's log reports registering as, in order.
std::vector<std::string> registered_ids(const Stack& stack) {
  const auto log = read_text(stack.agent_dir(0) / "agent.log");
  static const std::regex registered("registered with \\S+ as agent (agt_[0-9a-f]+)");
  std::vector<std::string> ids;
  for (std::sregex_iterator it(log.begin(), log.end(), registered), end; it != end; ++it)
    ids.push_back((*it)[1]);
  return ids;
}

// What `takosumi-agent --config agent.yaml --print-public-key` prints for agent-0, trimmed.
std::string print_public_key(const Stack& stack) {
  const std::filesystem::path bin = test_paths::binary_dir;
  const auto out = stack.agent_dir(0) / "print-public-key.out";
  ChildProcess printer({(bin / "agent/takosumi-agent").string(), "--config",
                        (stack.agent_dir(0) / "agent.yaml").string(), "--print-public-key"},
                       {}, out);
  EXPECT_EQ(printer.wait(std::chrono::seconds(60)), 0) << read_text(out);
  std::string text = read_text(out);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

bool wait_registrations(const Stack& stack, std::size_t n) {
  return eventually([&] { return registered_ids(stack).size() >= n; }, std::chrono::seconds(60));
}

TEST(AgentIdentity, ANewKeyIsRefusedUntilAnOperatorResetsTheAgent) {
  Stack stack;
  ASSERT_TRUE(wait_registrations(stack, 1)) << stack.agent_logs();
  const std::string id = registered_ids(stack)[0];
  // A restart with the same key keeps the id.
  stack.stop_agents();
  stack.start_agent(0);
  ASSERT_TRUE(wait_registrations(stack, 2)) << stack.agent_logs();
  EXPECT_EQ(registered_ids(stack)[1], id);

  // The key file is lost: the agent makes a new key, is refused, and stops with an error.
  stack.stop_agents();
  std::filesystem::remove(stack.agent_dir(0) / "state/keys/agent-sign.key");
  stack.start_agent(0);
  EXPECT_EQ(stack.wait_agent_exit(0, std::chrono::seconds(60)), 1);
  const auto log = stack.agent_logs();
  EXPECT_NE(log.find("agent_key_mismatch"), std::string::npos) << log;
  EXPECT_NE(log.find("/api/v1/agents/" + id + "/reset-keys"), std::string::npos) << log;
  EXPECT_EQ(registered_ids(stack).size(), 2u);

  // The operator reads the new key off the agent without starting it, and finds the same key, in
  // the body to send, in the agent's log.
  const std::string key = print_public_key(stack);
  ASSERT_EQ(key.size(), 44u) << key;
  EXPECT_NE(log.find("{\"signPublicKey\": \"" + key + "\"}"), std::string::npos) << log;
  auto reset = stack.api().post("/api/v1/agents/" + id + "/reset-keys",
                                json::object{{"signPublicKey", key}});
  ASSERT_EQ(reset.status, 200u) << reset.body;
  stack.start_agent(0);
  ASSERT_TRUE(wait_registrations(stack, 3)) << stack.agent_logs();
  EXPECT_EQ(registered_ids(stack)[2], id);

  // Manifests now reach the agent's new keys: a Run goes through.
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", R"(resource "terraform_data" "x" { input = "a" })"}});
  auto run = stack.plan(stack.create_capsule(repo.url(), {}, {}));
  EXPECT_EQ(str(run, "status"), "succeeded") << json::serialize(run);
}

TEST(AgentIdentity, AnAgentPinningAnotherControlPlaneKeyCannotRegister) {
  const TempDir dir("takosumi-otherkey-");
  auto other = crypto::SignKeyPair::generate();
  ASSERT_TRUE(crypto::write_public_key_file(dir / "other.pub", other.public_key.to_base64()));
  Stack stack(StackOptions{.pinned_key_override = dir / "other.pub"});
  EXPECT_EQ(stack.wait_agent_exit(0, std::chrono::seconds(60)), 1);
  const auto log = stack.agent_logs();
  EXPECT_NE(log.find("registration_signature_invalid"), std::string::npos) << log;
  EXPECT_TRUE(registered_ids(stack).empty());
}

}  // namespace
}  // namespace takosumi::testing
