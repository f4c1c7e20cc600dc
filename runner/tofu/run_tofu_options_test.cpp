#include "runner/tofu/run_tofu_options.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "runner/tofu/limit_failure.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The options of a Run's tofu commands from explicit values: no tofu runs here.
class RunTofuOptionsTest : public ::testing::Test {
 protected:
  RunTofuOptionsTest() {
    fs::create_directories(mirror_ / "registry.opentofu.org/hashicorp/null");
    fs::create_directories(mirror_ / "registry.opentofu.org/hashicorp/external");
    request_.binary = "/opt/tofu/tofu";
    request_.provider_mirror = mirror_;
    request_.workspace_root = dir_ / "ws";
    request_.lock_file = dir_ / "ws/agent/lock";
    request_.sandbox = SandboxOptions{};
    ExecControl control;
    control.confine = "/usr/libexec/takosumi-confine";
    control.landlock.abi = 3;
    request_.exec_control = control;
    request_.max_processes = 512;
  }
  TempDir dir_;
  fs::path mirror_ = dir_ / "mirror";
  RunTofuRequest request_;
};

TEST_F(RunTofuOptionsTest, TheSandboxSeesTofuAndOnlyTheAllowedProviders) {
  request_.policy.allowed_providers = std::vector<std::string>{"registry.opentofu.org/hashicorp/null"};
  auto made = run_tofu_options(request_);
  ASSERT_TRUE(made) << made.error().to_string();
  const auto& sandbox = *made->options.sandbox;
  const auto& ro = sandbox.read_only;
  EXPECT_NE(std::find(ro.begin(), ro.end(), fs::path("/opt/tofu/tofu")), ro.end());
  EXPECT_NE(std::find(ro.begin(), ro.end(), mirror_ / "registry.opentofu.org/hashicorp/null"), ro.end());
  EXPECT_EQ(std::find(ro.begin(), ro.end(), mirror_ / "registry.opentofu.org/hashicorp/external"), ro.end());
  ASSERT_TRUE(sandbox.confine);
  const auto& exec = sandbox.confine->arguments.exec;
  EXPECT_TRUE(has(exec, "/opt/tofu/tofu"));
  EXPECT_FALSE(has(exec, "/bin/sh")) << "no interpreter without provisioners or external data";
  EXPECT_FALSE(sandbox.confine->arguments.loader);
  EXPECT_EQ(sandbox.confine->arguments.max_processes, 512u) << "RLIMIT_NPROC without a cgroup";
  EXPECT_TRUE(made->warnings.empty());
}

TEST_F(RunTofuOptionsTest, ProvisionersAllowedAddTheInterpretersAndTheLoader) {
  request_.policy.allow_provisioners = true;
  request_.hooks = {"/etc/takosumi/hooks/pre-plan"};
  auto made = run_tofu_options(request_);
  ASSERT_TRUE(made) << made.error().to_string();
  const auto& confine = *made->options.sandbox->confine;
  EXPECT_TRUE(has(confine.arguments.exec, "/bin/sh"));
  EXPECT_TRUE(confine.arguments.loader);
  ASSERT_TRUE(made->options.hook_confine);
  const auto& hook = made->options.hook_confine->arguments.exec;
  EXPECT_TRUE(has(hook, "/etc/takosumi/hooks/pre-plan"));
  EXPECT_FALSE(has(hook, "/opt/tofu/tofu")) << "a hook's sandbox executes the hooks, not tofu";
}

TEST_F(RunTofuOptionsTest, NetworkNoneNeedsTheSandboxAndAnUnsandboxedRunIsWarned) {
  request_.sandbox.reset();
  request_.exec_control.reset();
  auto warned = run_tofu_options(request_);
  ASSERT_TRUE(warned) << warned.error().to_string();
  ASSERT_EQ(warned->warnings.size(), 1u);
  EXPECT_NE(warned->warnings[0].find("sandbox.mode is none"), std::string::npos);
  request_.policy.network = protocol::NetworkMode::none;
  auto refused = run_tofu_options(request_);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "sandbox_failed");
}

TEST_F(RunTofuOptionsTest, ARequiredExecAllowlistWithoutLandlockIsRefusedABestEffortOneWarned) {
  request_.exec_control->landlock = {0, "the kernel has no Landlock"};
  auto refused = run_tofu_options(request_);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "sandbox_failed");
  EXPECT_NE(refused.error().message.find("best-effort"), std::string::npos);
  request_.exec_control->required = false;
  auto warned = run_tofu_options(request_);
  ASSERT_TRUE(warned) << warned.error().to_string();
  ASSERT_EQ(warned->warnings.size(), 1u);
  EXPECT_NE(warned->warnings[0].find("not enforced"), std::string::npos);
}

TEST_F(RunTofuOptionsTest, MemoryIsTheCgroupsWhenItHoldsItElseEachProcesss) {
  request_.memory_bytes = 256u << 20;
  request_.workspace_bytes = 64u << 20;
  auto per_process = run_tofu_options(request_);
  ASSERT_TRUE(per_process);
  EXPECT_EQ(per_process->options.limits.address_space_bytes, 256u << 20);
  EXPECT_EQ(per_process->options.limits.file_size_bytes, 64u << 20);
  ASSERT_TRUE(per_process->options.workspace_budget);
  request_.cgroup_memory = true;
  request_.cgroups_managed = true;
  request_.cgroup_procs = std::vector<fs::path>{"/sys/fs/cgroup/run/cgroup.procs"};
  auto cgroup = run_tofu_options(request_);
  ASSERT_TRUE(cgroup);
  EXPECT_NE(cgroup->options.limits.address_space_bytes, 256u << 20);
  EXPECT_EQ(cgroup->options.cgroup_procs.size(), 1u);
  EXPECT_EQ(cgroup->options.sandbox->confine->arguments.max_processes, 0u) << "the cgroup's pids.max holds it";
}

TEST(LimitFailure, AFailurePastALimitNamesTheSetting) {
  const Status failed = fail("opentofu_failed", "fatal error: runtime: out of memory");
  EXPECT_EQ(name_the_limit(failed, {0, 0, 0}).error().code, "opentofu_failed") << "no limit set";
  auto memory = name_the_limit(failed, {256u << 20, 0, 0});
  EXPECT_EQ(memory.error().code, "limit_exceeded");
  EXPECT_NE(memory.error().message.find("limits.memoryMiB: 256 MiB"), std::string::npos);
  auto oom = name_the_limit(fail("opentofu_failed", "signal: killed"), {256u << 20, 0, 1});
  EXPECT_NE(oom.error().message.find("the kernel stopped it"), std::string::npos);
  auto file = name_the_limit(fail("opentofu_failed", "File size limit exceeded"), {0, 64u << 20, 0});
  EXPECT_NE(file.error().message.find("limits.workspaceMiB: 64 MiB"), std::string::npos);
  EXPECT_TRUE(name_the_limit(Status{}, {1, 1, 1}));
}

}  // namespace
}  // namespace takosumi::runner
