// The agent's settings and a Run's parts, joined into the request its tofu options are made from.
#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>

#include <algorithm>

#include "runner/run_tofu_request.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

bool has(const std::vector<fs::path>& paths, const fs::path& p) {
  return std::find(paths.begin(), paths.end(), p) != paths.end();
}

TEST(RunTofuRequest, CarriesTheRunsPartsProtectsTheAgentsFilesAndListsOnlyTheHooksThatAreSet) {
  testing::TempDir tmp;
  auto ws = RunWorkspace::create(tmp.path() / "work", "run_1", 1);
  ASSERT_TRUE(ws) << ws.error().to_string();
  RunnerSettings settings{"/opt/tofu", tmp.path() / "mirror", tmp.path() / "work"};
  settings.hooks.pre_plan = "/opt/hooks/pre-plan";
  settings.hooks.post_apply = "/opt/hooks/post-apply";
  settings.memory_bytes = 512u << 20;
  boost::asio::thread_pool pool(1);
  redaction::SecretSet secrets;
  protocol::RunPolicy policy;
  policy.network = protocol::NetworkMode::none;
  const fs::path binary = "/opt/tofu-1.12";
  const fs::path mirror = tmp.path() / "verified-mirror";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  const auto r = run_tofu_request(settings, {binary, mirror, deadline, policy, *ws, nullptr, pool, secrets});
  EXPECT_EQ(r.binary, binary) << "the chosen build, not tofu.binary";
  EXPECT_EQ(r.provider_mirror, mirror);
  EXPECT_EQ(r.deadline, deadline);
  EXPECT_EQ(r.policy.network, protocol::NetworkMode::none);
  EXPECT_EQ(r.memory_bytes, 512u << 20);
  EXPECT_EQ(r.workspace_root, ws->root());
  EXPECT_EQ(r.lock_file, ws->lock_file());
  for (const auto& p : {ws->credentials(), ws->lock_file(), ws->agent_dir(), ws->root() / "capture"})
    EXPECT_TRUE(has(r.protected_paths, p)) << p << " must be read-only in the sandbox";
  EXPECT_EQ(r.hooks, (std::vector<fs::path>{"/opt/hooks/pre-plan", "/opt/hooks/post-apply"}));
  EXPECT_FALSE(r.cgroup_procs) << "no cgroup made: none joined";
  EXPECT_FALSE(r.cgroup_memory);
  EXPECT_EQ(r.blocking, &pool);
  EXPECT_EQ(r.secrets, &secrets);
  (void)ws->wipe();
}

}  // namespace
}  // namespace takosumi::runner
