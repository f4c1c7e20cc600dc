// tofu.providerPins with the real agent and OpenTofu: a mirror that matches the operator's pins
// serves Runs; one byte of a provider binary changed on disk fails the next Run with
// provider_checksum_mismatch before any tofu of it starts (so before the provider could run).
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/stack.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/tofu_lock.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

constexpr const char* kNullModule = R"(terraform {
  required_providers {
    null = { source = "hashicorp/null" }
  }
}
resource "null_resource" "probe" {}
)";

// A mirror of the test mirror's null provider, and the pins `tofu init` writes for it: made
// before the stack starts its agent, which reads both.
struct PinnedMirror {
  PinnedMirror() {
    fs::create_directories(mirror() / "registry.opentofu.org/hashicorp");
    fs::copy(fs::path(test_paths::provider_mirror) / "registry.opentofu.org/hashicorp/null",
             mirror() / "registry.opentofu.org/hashicorp/null",
             fs::copy_options::recursive);
    std::ofstream(pins()) << tofu_lock_file(dir.path(), kNullModule, mirror());
  }
  fs::path mirror() const { return dir.path() / "mirror"; }
  fs::path pins() const { return dir.path() / "pins.lock.hcl"; }
  fs::path binary() const {
    return mirror() / "registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64/terraform-provider-null_v3.3.1";
  }
  TempDir dir;
};

StackOptions pinned(const PinnedMirror& m) {
  StackOptions o;
  o.provider_mirror = m.mirror();
  o.provider_pins = m.pins();
  return o;
}

TEST(MirrorPins, AProviderAlteredOnDiskNeverRuns) {
  PinnedMirror m;
  Stack stack(pinned(m));
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", kNullModule}});
  const auto capsule = stack.create_capsule_from(json::object{
      {"name", "pinned"},
      {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
      {"outputAllowlist", json::object{}}});
  auto first = stack.plan(capsule);
  ASSERT_EQ(str(first, "status"), "succeeded") << json::serialize(first) << stack.agent_logs();

  {
    std::fstream f(m.binary(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8192);
    f.put('\x7f');
  }
  auto second = stack.plan(capsule);
  EXPECT_EQ(str(second, "status"), "failed") << json::serialize(second);
  EXPECT_EQ(failure_code(second), "provider_checksum_mismatch") << json::serialize(second);
  const std::string message = str(second.at("failure").as_object(), "message");
  EXPECT_NE(message.find("hashicorp/null 3.3.1 linux_amd64"), std::string::npos) << message;
  EXPECT_NE(message.find("altered"), std::string::npos) << message;
  // Nothing of tofu ran for it: no version asked, no init, no plan.
  auto logs = stack.api().get("/api/v1/runs/" + str(second, "id") + "/logs").body;
  EXPECT_EQ(logs.find("Initializing"), std::string::npos) << logs;

  // The unit's ExecStartPre (--check-config) stops a start on the tampered mirror.
  ChildProcess check({(fs::path(test_paths::binary_dir) / "agent/takosumi-agent").string(),
                      "--config", stack.agent_config(0).string(), "--check-config"},
                     {}, stack.root() / "check-config.log");
  EXPECT_EQ(check.wait(std::chrono::seconds(60)), 2) << read_text(check.log_file());
  EXPECT_NE(read_text(check.log_file()).find("provider_checksum_mismatch"), std::string::npos)
      << read_text(check.log_file());
}

// A module that brings its own dependency lock file with a hash the operator did not pin fails
// before init reads it; one whose lock file lists the pinned hash runs, and its providers come
// from the agent's verified copy, not the mirror.
TEST(MirrorPins, AModulesLockFileMustListThePinnedHashes) {
  PinnedMirror m;
  Stack stack(pinned(m));
  TestGitRepo repo(stack.root() / "repo");
  const std::string pins = read_text(m.pins());
  const auto h1 = pins.find("\"h1:");
  ASSERT_NE(h1, std::string::npos) << pins;
  const std::string pinned_hash = pins.substr(h1 + 1, pins.find('"', h1 + 1) - h1 - 1);
  const std::string foreign = "h1:" + std::string(43, 'A') + "=";
  const auto lock = [](const std::string& hash) {
    return "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"3.3.1\"\n"
           "  hashes = [\n    \"" + hash + "\",\n  ]\n}\n";
  };
  repo.commit({{"main.tf", kNullModule}, {".terraform.lock.hcl", lock(foreign)}});
  const auto capsule = stack.create_capsule_from(json::object{
      {"name", "locked"},
      {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
      {"outputAllowlist", json::object{}}});
  auto refused = stack.plan(capsule);
  EXPECT_EQ(failure_code(refused), "provider_checksum_mismatch") << json::serialize(refused);
  EXPECT_NE(str(refused.at("failure").as_object(), "message").find("lock file"), std::string::npos);
  auto logs = stack.api().get("/api/v1/runs/" + str(refused, "id") + "/logs").body;
  EXPECT_EQ(logs.find("Initializing"), std::string::npos) << logs;

  repo.commit({{"main.tf", kNullModule}, {".terraform.lock.hcl", lock(pinned_hash)}});
  auto planned = stack.plan(capsule);
  EXPECT_EQ(str(planned, "status"), "succeeded") << json::serialize(planned) << stack.agent_logs();
  EXPECT_TRUE(fs::exists(stack.agent_dir(0) / "state/verified-mirror"));
}

}  // namespace
}  // namespace takosumi::testing
