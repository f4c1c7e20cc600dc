// A simulated reboot: the agent and everything it started die at once (power loss) and the tmpfs
// workspace is gone when the agent comes back. The state must come from the encrypted checkpoint
// the agent took while the apply ran.
#include <gtest/gtest.h>
#include <signal.h>

#include <optional>
#include <thread>

#include "crypto/sha256.hpp"
#include "tests/fault/fault_support.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

// SIGKILL to every process whose working directory is under dir: all of a Run's processes.
void kill_everything_under(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::error_code ec;
    auto target = fs::read_symlink(e.path() / "cwd", ec);
    if (ec || target.string().rfind(dir.string(), 0) != 0) continue;
    const auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") == std::string::npos) ::kill(std::stoi(name), SIGKILL);
  }
}

std::optional<fs::path> checkpoint_in(const fs::path& spool) {
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(spool, ec))
    if (e.path().filename().string().ends_with(".checkpoint.env")) return e.path();
  return std::nullopt;
}

TEST(Reboot, TheStateComesBackFromTheEncryptedCheckpointWhenTheWorkspaceIsGone) {
  Stack stack;
  TestGitRepo repo(stack.root() / "repo");
  // OpenTofu persists its state during an apply when a resource completes 20 s or more after the
  // first one did: f1 starts that clock, the 21 s sleep ends it (persisted and checkpointed with
  // f1), and the kill lands in the long sleep after it, before f2.
  const std::string module = R"(terraform {
  required_providers {
    local = { source = "hashicorp/local" }
    time  = { source = "hashicorp/time" }
  }
}
variable "out_dir" { type = string }
resource "local_file" "f1" {
  filename = "${var.out_dir}/f1"
  content  = "1"
}
resource "time_sleep" "persist" {
  depends_on      = [local_file.f1]
  create_duration = "21s"
}
resource "time_sleep" "long" {
  depends_on      = [time_sleep.persist]
  create_duration = "120s"
}
resource "local_file" "f2" {
  depends_on = [time_sleep.long]
  filename   = "${var.out_dir}/f2"
  content    = "2"
}
)";
  repo.commit({{"main.tf", module}});
  const auto out_dir = stack.real_world() / "reboot";
  const auto [capsule, run_id] = plan_and_start_apply(stack, repo.url(), "reboot");
  ASSERT_FALSE(run_id.empty());
  const auto spool = stack.agent_dir(0) / "state/spool";
  ASSERT_TRUE(eventually([&] { return checkpoint_in(spool).has_value(); }, std::chrono::seconds(120)))
      << stack.agent_logs();
  ASSERT_EQ(files_in(out_dir), (std::set<std::string>{"f1"}));
  auto checkpoint_sha = crypto::sha256_file_hex(*checkpoint_in(spool));
  ASSERT_TRUE(checkpoint_sha);

  // Power loss: nothing gets to run a handler, and the tmpfs goes with it.
  const auto work = stack.agent_dir(0) / "work";
  stack.kill_agent(0);
  kill_everything_under(work);
  ASSERT_TRUE(eventually([&] { return !process_running_under(work); }, std::chrono::seconds(30)));
  fs::remove_all(work);

  stack.start_agent(0);
  auto run = stack.wait_run(run_id);
  EXPECT_EQ(str(run, "status"), "failed") << json::serialize(run);
  EXPECT_EQ(failure_code(run), "interrupted");
  auto failure = run.at("failure").as_object();
  EXPECT_NE(str(failure, "message").find("checkpoint"), std::string::npos) << json::serialize(run);
  auto versions = stack.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u) << "the checkpoint was not recovered";
  auto sv = versions[0].as_object();
  EXPECT_TRUE(sv.at("partial").as_bool());
  // The StateVersion is the checkpoint itself, byte for byte: the same envelope, sealed while the
  // apply ran, decryptable by the control plane.
  EXPECT_EQ(str(sv, "ciphertextSha256"), *checkpoint_sha);
  const auto state = stack.state_plaintext(str(sv, "ciphertextSha256"));
  // It is what OpenTofu had persisted when the power went. (OpenTofu 1.12 writes its intermediate
  // local state at most every 20 s, and that write lists the resource that triggered it;
  // docs/operations.md tells the operator to reconcile after a power loss.)
  EXPECT_NE(state.find("\"time_sleep\""), std::string::npos) << state;
  EXPECT_NE(state.find("\"persist\""), std::string::npos) << state;
  auto capsule_json = stack.capsule(capsule);
  EXPECT_TRUE(capsule_json.at("needsAttention").as_bool()) << json::serialize(capsule_json);
  EXPECT_TRUE(files_containing(stack.agent_dir(0) / "state", "\"instances\"").empty())
      << "plaintext state in the agent's persistent directory";
}

}  // namespace
}  // namespace takosumi::testing
