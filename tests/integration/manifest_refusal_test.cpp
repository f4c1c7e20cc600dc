// The agent refuses manifests it cannot trust before anything runs.
#include <gtest/gtest.h>

#include "controlplane/store/db/database.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

void expect_refused(Stack& stack, const std::string& expected_code) {
  const auto out = stack.root() / "real-world";
  std::filesystem::create_directories(out);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", example_module("hello")}});
  auto capsule = stack.create_capsule(repo.url(), json::object{{"out_dir", out.string()}}, {});
  auto run = stack.plan(capsule);
  EXPECT_EQ(json::value_to<std::string>(run.at("status")), "failed");
  EXPECT_EQ(failure_code(run), expected_code) << json::serialize(run);
  // Nothing ran: the source was never fetched, no workspace was made.
  const auto agent = stack.root() / "agent-0";
  for (const auto& dir : {agent / "state/git-cache", agent / "work"})
    EXPECT_TRUE(!std::filesystem::exists(dir) || std::filesystem::is_empty(dir)) << dir;
}

TEST(ManifestRefusal, ManifestSignedByAnotherKeyIsRefused) {
  Stack stack;
  // The agent registers against the key it pins; then the control plane comes back with another
  // signing key (as a compromised or impostor control plane would), so no manifest verifies.
  ASSERT_TRUE(eventually([&] { return stack.agent_logs().find("registered with") != std::string::npos; },
                         std::chrono::seconds(60)))
      << stack.agent_logs();
  stack.stop_control(false);
  std::filesystem::remove(stack.data_dir() / "keys/signing.key");
  std::filesystem::remove(stack.data_dir() / "keys/signing.pub");
  // The impostor has the store too, and unbinds the keys it was served with (key_binding.hpp):
  // what stops it then is the agent's pinned key.
  {
    auto db = controlplane::Database::open_sqlite(stack.data_dir() / "control.db");
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->run("DELETE FROM control_plane_keys"));
  }
  stack.start_control();
  expect_refused(stack, "manifest_bad_signature");
}

TEST(ManifestRefusal, ExpiredManifestIsRefused) {
  Stack stack(StackOptions{.manifest_ttl_seconds = 0});
  expect_refused(stack, "manifest_expired");
}

}  // namespace
}  // namespace takosumi::testing
