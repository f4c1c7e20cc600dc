// What the runner checks and sets up around the sandbox: the providers tofu installed, and the
// Run's pids cgroup (real cgroups: the suite runs as root on a host with a writable pids
// hierarchy, as CI does).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <vector>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "runner/policy/installed_providers.hpp"
#include "runner/tofu/disk_budget.hpp"
#include "runner/tofu/run_cgroups.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::TempDir;

const fs::path kMirror = test_paths::provider_mirror;
const fs::path kNull = "registry.opentofu.org/hashicorp/null/3.3.1";

fs::path platform_entry(const TempDir& module) {
  const auto dir = module.path() / ".terraform/providers" / kNull;
  fs::create_directories(dir);
  std::ofstream(dir / "linux_amd64.lock");  // tofu's own lock file, not a provider
  return dir / "linux_amd64";
}

TEST(InstalledProviders, LinksIntoTheMirrorToStaticProvidersPass) {
  TempDir module;
  fs::create_directory_symlink(kMirror / kNull / "linux_amd64", platform_entry(module));
  EXPECT_TRUE(check_installed_providers(module.path(), kMirror));
  TempDir empty;
  EXPECT_TRUE(check_installed_providers(empty.path(), kMirror)) << "no providers: nothing to check";
}

TEST(InstalledProviders, AProviderUnpackedIntoTheWorkspaceIsRefused) {
  TempDir module;
  fs::create_directories(platform_entry(module));
  auto checked = check_installed_providers(module.path(), kMirror);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().code, errc::kSandboxFailed);
  EXPECT_NE(checked.error().message.find("unpacked into the Run's workspace"), std::string::npos)
      << checked.error().message;
}

TEST(InstalledProviders, ALinkOutOfTheMirrorOrToADynamicProviderIsRefused) {
  TempDir module, elsewhere;
  fs::create_directory_symlink(elsewhere.path(), platform_entry(module));
  auto outside = check_installed_providers(module.path(), kMirror);
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.error().message.find("does not lead into the mirror"), std::string::npos);

  TempDir mirror, module2;
  fs::create_directories(mirror.path() / kNull / "linux_amd64");
  fs::copy_file("/usr/bin/true", mirror.path() / kNull / "linux_amd64/terraform-provider-null_v3.3.1");
  fs::create_directory_symlink(mirror.path() / kNull / "linux_amd64", platform_entry(module2));
  auto dynamic = check_installed_providers(module2.path(), mirror.path());
  ASSERT_FALSE(dynamic);
  EXPECT_NE(dynamic.error().message.find("dynamically linked"), std::string::npos)
      << dynamic.error().message;
}

// Runs sh -c script as a member of cgroup, output to out; returns its exit status.
int run_in(const RunCgroup& cgroup, const std::string& script, const fs::path& out) {
  std::vector<int> procs;
  for (const auto& file : cgroup.procs_files()) procs.push_back(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const int fd : procs)
      if (::write(fd, "0", 1) != 1) ::_exit(97);
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execl("/bin/sh", "sh", "-c", script.c_str(), nullptr);
    ::_exit(98);
  }
  for (const int fd : procs) ::close(fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(RunCgroups, ARunsCgroupCapsItsTasksAndItsEndKillsWhatIsLeft) {
  auto cgroups = RunCgroups::open(true, "unit-test-" + std::to_string(::getpid()));
  ASSERT_TRUE(cgroups) << cgroups.error().message;
  TempDir dir;
  fs::path path;
  {
    auto cgroup = cgroups->create("run_test-1", RunCgroupLimits{12, std::nullopt});
    ASSERT_TRUE(cgroup) << cgroup.error().message;
    path = cgroup->path();
    run_in(*cgroup, "i=0; while [ $i -lt 40 ]; do sleep 3175 & i=$((i+1)); done; echo all-forked",
           dir / "out");
    std::ifstream in(dir / "out");
    const std::string out((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(out.find("Cannot fork"), std::string::npos) << out;
    EXPECT_EQ(out.find("all-forked"), std::string::npos) << out;
    std::ifstream current(path / "pids.current");
    int tasks = 0;
    current >> tasks;
    EXPECT_GT(tasks, 0) << "the sleeps left behind are still members";
  }
  EXPECT_FALSE(fs::exists(path)) << "the cgroup outlived its Run";
  cgroups->remove_when_idle();
}

// The memory of everything in the Run's cgroup together: a member that allocates past it is
// killed by the kernel, which the cgroup counts, and nothing outside it is touched.
TEST(RunCgroups, ARunsCgroupCapsItsMemoryAndCountsTheKill) {
  auto cgroups = RunCgroups::open(true, "unit-test-mem-" + std::to_string(::getpid()));
  ASSERT_TRUE(cgroups) << cgroups.error().message;
  ASSERT_TRUE(cgroups->limits_memory()) << cgroups->describe() << ": no memory controller to manage";
  TempDir dir;
  {
    auto cgroup = cgroups->create("run_test-mem", RunCgroupLimits{0, 64ull << 20});
    ASSERT_TRUE(cgroup) << cgroup.error().message;
    EXPECT_EQ(cgroup->oom_kills(), 0u);
    const int status = run_in(*cgroup, "exec python3 -c 'x = bytearray(512 << 20); x[::4096] = b\"x\" * len(x[::4096]); print(\"allocated\")'",
                              dir / "out");
    std::ifstream in(dir / "out");
    const std::string out((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(out.find("allocated"), std::string::npos) << out;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status << " " << out;
    EXPECT_GT(cgroup->oom_kills(), 0u);
  }
  cgroups->remove_when_idle();
}

// The workspace watcher's measure: allocated blocks, links not followed, and it fails closed on
// what it cannot measure (nesting deeper than it walks).
TEST(DiskBudget, UsageCountsBlocksNotLinksAndRefusesWhatItCannotMeasure) {
  TempDir dir;
  std::ofstream(dir / "data", std::ios::binary) << std::string(1 << 20, 'x');
  fs::create_directory_symlink("/usr", dir / "link-to-usr");
  auto usage = measure_disk_usage(dir.path(), 1000);
  EXPECT_GE(usage.bytes, 1u << 20);
  EXPECT_LT(usage.bytes, 2u << 20) << "the link's target was counted";
  EXPECT_FALSE(over_budget(usage, 4u << 20, 1000));
  EXPECT_TRUE(over_budget(usage, 512u << 10, 1000));
  fs::path deep = dir / "deep";
  for (int i = 0; i < kMaxWorkspaceDepth + 2; ++i) deep /= "d";
  fs::create_directories(deep);
  auto nested = measure_disk_usage(dir.path(), 1000);
  EXPECT_TRUE(nested.too_deep);
  EXPECT_TRUE(over_budget(nested, 4u << 20, 1000));
  auto many = measure_disk_usage(dir.path(), 10);
  EXPECT_TRUE(over_budget(many, 4u << 20, 10));
}

// A Run can make a directory it may list but not search (chmod 0400 after filling it): its files
// cannot be measured, so the workspace is over budget rather than counted without them. Measured
// as the agent runs, without root's right to search anything (as nobody when the test is root).
TEST(DiskBudget, ADirectoryThatCanBeListedButNotSearchedIsNoPartLeftOut) {
  TempDir dir;
  fs::permissions(dir.path(), fs::perms::all);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    const fs::path hidden = dir / "hidden";
    std::error_code ec;
    fs::create_directory(hidden, ec);
    std::ofstream(hidden / "big", std::ios::binary) << std::string(1 << 20, 'x');
    fs::permissions(hidden, fs::perms::owner_read, ec);
    if (ec) ::_exit(4);
    const auto usage = measure_disk_usage(dir.path(), 1000);
    fs::permissions(hidden, fs::perms::owner_all, ec);
    ::_exit(usage.unreadable && over_budget(usage, 4u << 20, 1000) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: measured without the hidden file; 3, 4: set-up failed";
}

}  // namespace
}  // namespace takosumi::runner