// The tofu phases alone, with scripted tofu commands (FakeProcessLauncher): each takes what the Run
// lends it (PhaseContext) and returns what it produced, with no RunFlow around it.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <fstream>

#include "runner/phases/apply_phase.hpp"
#include "runner/phases/drift_phase.hpp"
#include "runner/phases/init_cache.hpp"
#include "runner/phases/plan_phase.hpp"
#include "common/file_io.hpp"
#include "crypto/sha256.hpp"
#include "tests/support/fake_process_launcher.hpp"
#include "tests/support/run_to_end.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_manifest.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::FakeCommand;
using takosumi::testing::FakeProcessLauncher;
using Names = std::vector<std::string>;

FakeCommand plan_exiting(int exit_code) {
  FakeCommand plan;
  plan.exit_code = exit_code;
  plan.on_start = [](const ProcessSpec& spec) {
    std::ofstream(takosumi::testing::plan_out_file(spec)) << "a plan file";
  };
  return plan;
}

FakeCommand show_printing(std::string json) {
  FakeCommand show;
  show.captured_stdout = std::move(json);
  return show;
}

class PhasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ws = RunWorkspace::create(tmp_.path() / "work", "run_1", 1);
    ASSERT_TRUE(ws) << ws.error().to_string();
    workspace_.emplace(std::move(*ws));
    module_dir_ = workspace_->source() / "infra";
    fs::create_directories(module_dir_);
    fs::create_directories(outbox_);
    TofuOptions options;
    options.binary = "/usr/bin/tofu";  // never started: the launcher plays the script back
    options.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    options.secrets = &secrets_;
    tofu_.emplace(launcher_, cancel_, std::move(options), *workspace_, module_dir_, log_);
  }

  PhaseContext context(protocol::RunType type) {
    manifest_ = testing::test_manifest("run_1", type, {"file:///unused", "0000", "infra"});
    return PhaseContext{pool_,    manifest_, *tofu_, *workspace_, module_dir_, outbox_, 1u << 20,
                        secrets_, log_,      millis_};
  }

  testing::TempDir tmp_;
  boost::asio::io_context io_;
  boost::asio::thread_pool pool_{1};
  FakeProcessLauncher launcher_;
  CancelSignal cancel_;
  redaction::SecretSet secrets_;
  std::vector<std::string> lines_;
  redaction::LogSink log_ = [this](std::string_view line) { lines_.emplace_back(line); };
  std::optional<RunWorkspace> workspace_;
  fs::path module_dir_;
  fs::path outbox_ = tmp_.path() / "outbox";
  std::optional<TofuCli> tofu_;
  protocol::JobManifest manifest_;
  std::map<std::string, std::int64_t> millis_;
};

TEST_F(PhasesTest, ADriftCheckThatFoundNothingRunsNoShow) {
  launcher_.script("plan", plan_exiting(0));
  auto report = testing::run_to_end(io_, async_drift_phase(context(protocol::RunType::drift_check)));
  ASSERT_TRUE(report) << report.error().to_string();
  EXPECT_EQ(report->status, "no_drift");
  EXPECT_EQ(launcher_.started(), (Names{"plan"}));
  EXPECT_TRUE(millis_.contains("plan"));
  EXPECT_FALSE(millis_.contains("show"));
}

TEST_F(PhasesTest, ADriftFoundIsNamedInTheReportAndTheLog) {
  launcher_.script("plan", plan_exiting(2));
  launcher_.script("show", show_printing(
      R"({"format_version":"1.2","resource_drift":[{"address":"terraform_data.a","mode":"managed",)"
      R"("type":"terraform_data","name":"a","change":{"actions":["update"],)"
      R"("before":{"input":"x"},"after":{"input":"y"}}}]})"));
  auto report = testing::run_to_end(io_, async_drift_phase(context(protocol::RunType::drift_check)));
  ASSERT_TRUE(report) << report.error().to_string();
  EXPECT_EQ(report->status, "drift");
  ASSERT_EQ(report->resources.size(), 1u);
  EXPECT_EQ(report->resources[0].address, "terraform_data.a");
  EXPECT_EQ(launcher_.started(), (Names{"plan", "show"}));
  // Read from the frozen copy, out of the sandbox's reach.
  EXPECT_TRUE(fs::exists(workspace_->agent_dir() / "drift.tfplan"));
  EXPECT_TRUE(std::any_of(lines_.begin(), lines_.end(),
                          [](const std::string& l) { return l.find("terraform_data.a") != std::string::npos; }));
}

TEST_F(PhasesTest, APlanWithoutChangesIsNotSealedButItsViewIsKept) {
  launcher_.script("plan", plan_exiting(0));
  launcher_.script("show", show_printing(R"({"format_version":"1.2","resource_changes":[]})"));
  auto planned = testing::run_to_end(io_, async_plan_phase(context(protocol::RunType::plan), PlanMode::normal, {}));
  ASSERT_TRUE(planned) << planned.error().to_string();
  EXPECT_FALSE(planned->review.has_changes);
  EXPECT_FALSE(planned->sealed);
  EXPECT_EQ(planned->view_file, outbox_ / "plan_view.json");
  EXPECT_TRUE(fs::exists(planned->view_file));
  EXPECT_EQ(planned->view_sha256.size(), 64u);
  EXPECT_EQ(launcher_.started(), (Names{"plan", "show"}));
}

TEST_F(PhasesTest, APlanThatTofuFailsIsThePlanFailure) {
  launcher_.script("plan", plan_exiting(1));
  auto planned = testing::run_to_end(io_, async_plan_phase(context(protocol::RunType::plan), PlanMode::normal, {}));
  ASSERT_FALSE(planned);
  EXPECT_EQ(planned.error().code, "opentofu_plan_failed");
  EXPECT_EQ(launcher_.started(), (Names{"plan"}));
  EXPECT_FALSE(fs::exists(outbox_ / "plan_view.json"));
}

TEST_F(PhasesTest, AnApplyCancelledBeforeItStartsAppliesNothingAndSealsNothing) {
  cancel_.request();
  const ApplyStart start{true, nullptr, cancel_, std::chrono::seconds(1), tmp_.path() / "work"};
  AppliedRun applied;
  const Status done = testing::run_to_end(io_, async_apply_phase(context(protocol::RunType::apply), start, applied));
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, "cancelled");
  EXPECT_TRUE(launcher_.started().empty());
  EXPECT_FALSE(applied.state);
  EXPECT_EQ(applied.checkpoints, 0);
}

TEST_F(PhasesTest, AnApplyRefusedByItsFencingRunsNoTofu) {
  bool asked = false;
  const ApplyStart start{true,
                         [&]() -> boost::asio::awaitable<Status> {
                           asked = true;
                           co_return fail("lease_lost", "the lease is gone");
                         },
                         cancel_, std::chrono::seconds(1), tmp_.path() / "work"};
  AppliedRun applied;
  const Status done = testing::run_to_end(io_, async_apply_phase(context(protocol::RunType::apply), start, applied));
  ASSERT_FALSE(done);
  EXPECT_TRUE(asked);
  EXPECT_EQ(done.error().code, "lease_lost");
  EXPECT_TRUE(launcher_.started().empty());
}

class InitCacheTest : public PhasesTest {
 protected:
  void SetUp() override {
    PhasesTest::SetUp();
    fs::create_directories(mirror_ / "registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64");
    std::ofstream(module_dir_ / "main.tf") << "resource \"null_resource\" \"a\" {}\n";
  }

  InitInputs inputs() const {
    return InitInputs{module_dir_, {"main.tf"}, false, "/bin/sh", "cli config", mirror_, "{}", "{}"};
  }

  // What init leaves: a provider linked into the mirror, the list of modules, the lock file.
  void init_result(const fs::path& link_target) const {
    const auto dir = module_dir_ / ".terraform/providers/registry.opentofu.org/hashicorp/null/3.3.1";
    fs::create_directories(dir);
    fs::create_directory_symlink(link_target, dir / "linux_amd64");
    fs::create_directories(module_dir_ / ".terraform/modules");
    std::ofstream(module_dir_ / ".terraform/modules/modules.json") << R"({"Modules":[]})";
    std::ofstream(module_dir_ / ".terraform.lock.hcl") << "# lock\n";
  }

  std::size_t entries() const {
    std::error_code ec;
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(cache_dir_, ec), fs::directory_iterator()));
  }

  fs::path mirror_ = tmp_.path() / "mirror";
  fs::path cache_dir_ = tmp_.path() / "init-cache";
  InitCache cache_{cache_dir_};
};

TEST_F(InitCacheTest, TheKeyChangesWithEveryInputToInit) {
  const auto key = init_cache_key(*workspace_, inputs());
  ASSERT_TRUE(key);
  EXPECT_EQ(init_cache_key(*workspace_, inputs()), key) << "the same inputs, the same key";
  auto vars = inputs();
  vars.variables = R"({"name":"b"})";
  EXPECT_NE(init_cache_key(*workspace_, vars), key);
  auto remote = inputs();
  remote.remote_modules = true;
  EXPECT_FALSE(init_cache_key(*workspace_, remote)) << "a configuration with remote modules is never cached";
  std::ofstream(module_dir_ / ".terraform.lock.hcl") << "# committed\n";
  const auto with_lock = init_cache_key(*workspace_, inputs());
  EXPECT_NE(with_lock, key) << "a committed lock file is an input";
  fs::create_directories(mirror_ / "registry.opentofu.org/hashicorp/null/3.4.0/linux_amd64");
  EXPECT_NE(init_cache_key(*workspace_, inputs()), with_lock) << "a package added to the mirror";
  std::ofstream(module_dir_ / "main.tf", std::ios::app) << "# changed\n";
  EXPECT_NE(init_cache_key(*workspace_, inputs()), with_lock);
}

TEST_F(InitCacheTest, AResultIsRestoredAsInitLeftIt) {
  init_result(mirror_ / "registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64");
  ASSERT_TRUE(cache_.store("k1", module_dir_, mirror_));
  EXPECT_EQ(entries(), 1u);
  ASSERT_TRUE(remove_tree(module_dir_ / ".terraform"));
  fs::remove(module_dir_ / ".terraform.lock.hcl");
  auto restored = cache_.restore("k1", *workspace_, module_dir_, mirror_);
  ASSERT_TRUE(restored) << restored.error().to_string();
  EXPECT_TRUE(*restored);
  EXPECT_EQ(fs::read_symlink(module_dir_ / ".terraform/providers/registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64"),
            mirror_ / "registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64");
  EXPECT_EQ(read_file(module_dir_ / ".terraform/modules/modules.json", 100).value(), R"({"Modules":[]})");
  EXPECT_EQ(read_file(module_dir_ / ".terraform.lock.hcl", 100).value(), "# lock\n");
  EXPECT_FALSE(cache_.restore("k2", *workspace_, module_dir_, mirror_).value()) << "another key: nothing";
  // Against another mirror the entry's links lead nowhere the Run may use: refused and dropped.
  const fs::path other = tmp_.path() / "other-mirror";
  fs::create_directories(other);
  EXPECT_FALSE(cache_.restore("k1", *workspace_, module_dir_, other).value());
  EXPECT_EQ(entries(), 0u);
}

TEST_F(InitCacheTest, OnlyWhatInitMakesFromTheMirrorIsKept) {
  init_result(tmp_.path());  // a provider link out of the mirror
  EXPECT_TRUE(cache_.store("k1", module_dir_, mirror_));
  EXPECT_EQ(entries(), 0u);
  ASSERT_TRUE(remove_tree(module_dir_ / ".terraform"));
  init_result(mirror_ / "registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64");
  fs::create_directories(module_dir_ / ".terraform/modules/vpc");  // a downloaded module
  std::ofstream(module_dir_ / ".terraform/modules/vpc/main.tf") << "# remote\n";
  EXPECT_TRUE(cache_.store("k1", module_dir_, mirror_));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(InitCacheTest, AnEntryThatWouldWriteElsewhereIsRefusedEvenWithAValidDigest) {
  fs::create_directories(cache_dir_);
  std::string body = "takosumi-init-cache 1\nk1\nF 7 4\n../evilevil";
  body += "E " + crypto::sha256_hex(body) + "\n";
  ASSERT_TRUE(write_file_atomic(cache_dir_ / "k1.init", body));
  EXPECT_FALSE(cache_.restore("k1", *workspace_, module_dir_, mirror_).value());
  EXPECT_FALSE(fs::exists(workspace_->source() / "evil"));
  EXPECT_EQ(entries(), 0u);
}

}  // namespace
}  // namespace takosumi::runner
