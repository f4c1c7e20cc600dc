// The Run's steps and their failure mapping with scripted tofu commands (FakeProcessLauncher):
// what each command's exit or a cancel becomes in the report. What OpenTofu itself does is
// tested with OpenTofu in run_executor_test.cpp and the integration tests.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <fstream>

#include "common/file_io.hpp"
#include "crypto/envelope.hpp"
#include "runner/run_executor.hpp"
#include "tests/support/run_to_end.hpp"
#include "tests/support/fake_process_launcher.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_manifest.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using takosumi::testing::FakeCommand;
using takosumi::testing::FakeProcessLauncher;
using takosumi::testing::TempDir;
using takosumi::testing::TestGitRepo;

constexpr const char* kPlanJson =
    R"({"format_version":"1.2","resource_changes":[{"address":"terraform_data.a",)"
    R"("type":"terraform_data","change":{"actions":["create"]}}]})";

std::string state_json(int serial, std::size_t padding = 0) {
  return R"({"version":4,"serial":)" + std::to_string(serial) +
         R"(,"lineage":"11111111-2222-3333-4444-555555555555","outputs":{},"resources":[)" +
         R"({"type":"terraform_data","name":"a","instances":[{"attributes":{"pad":")" +
         std::string(padding, 'x') + R"("}}]}]})";
}

// tofu plan as the real one leaves it: the -out file written, exit 2 (changes).
FakeCommand plan_with_changes() {
  FakeCommand plan;
  plan.exit_code = 2;
  plan.on_start = [](const ProcessSpec& spec) {
    std::ofstream(takosumi::testing::plan_out_file(spec)) << "a plan file";
  };
  return plan;
}

FakeCommand show_plan() {
  FakeCommand show;
  show.captured_stdout = kPlanJson;
  return show;
}

// tofu apply that persisted a new state (in its working directory, the module) before it ended.
FakeCommand apply_writing_state(int exit_code, std::size_t padding = 0) {
  FakeCommand apply;
  apply.exit_code = exit_code;
  apply.on_start = [padding](const ProcessSpec& spec) {
    std::ofstream(spec.cwd / "terraform.tfstate") << state_json(1, padding);
  };
  return apply;
}

class RunFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    commit_ = repo_.commit({{"infra/main.tf", "resource \"terraform_data\" \"a\" {}\n"}});
  }

  protocol::JobManifest manifest(const std::string& run_id, protocol::RunType type) const {
    return testing::test_manifest(run_id, type, {repo_.url(), commit_, "infra"},
                                  control_.public_key);
  }

  // Runs with a fresh launcher scripted by `script`; executor_ is the running executor. The
  // Run's log lines (redacted) go to `log` when given.
  RunOutcome run(RunInputs inputs, const std::function<void(FakeProcessLauncher&)>& script,
                 redaction::LogSink log = nullptr) {
    auto launcher = std::make_unique<FakeProcessLauncher>();
    script(*launcher);
    const FakeProcessLauncher& fake = *launcher;  // owned by the executor
    RunExecutor executor(io_.get_executor(), pool_, settings_, std::move(launcher));
    executor_ = &executor;
    inputs.outbox = tmp_.path() / "outbox";
    auto outcome = testing::run_to_end(io_, executor.async_run(std::move(inputs), std::move(log)));
    started_ = fake.started();
    executor_ = nullptr;
    return outcome;
  }

  RunOutcome plan(const std::function<void(FakeProcessLauncher&)>& script) {
    return run(RunInputs{manifest("run_plan", protocol::RunType::plan)}, script);
  }

  // A plan Run with changes, made with scripted commands.
  RunOutcome plan_with_changes_run() {
    return plan([](FakeProcessLauncher& l) {
      l.script("plan", plan_with_changes());
      l.script("show", show_plan());
    });
  }

  // The inputs of the apply of `planned` (which has a plan envelope), as an agent prepares them.
  RunInputs apply_inputs(const RunOutcome& planned) {
    RunInputs in{manifest("run_apply", protocol::RunType::apply)};
    in.manifest.saved_plan = protocol::SavedPlanRef{planned.report.plan_digest, "unused-in-tests"};
    in.plan_envelope = *planned.plan_envelope;
    auto prefix = crypto::read_envelope_prefix(*planned.plan_envelope);
    EXPECT_TRUE(prefix);
    if (!prefix) return in;
    auto dek = crypto::open_envelope_dek(*prefix, control_);
    EXPECT_TRUE(dek);
    if (dek) in.plan_dek = std::move(*dek);
    return in;
  }

  // Applies a plan made with scripted commands; `script` scripts the apply Run's commands.
  RunOutcome apply(const std::function<void(FakeProcessLauncher&)>& script) {
    auto planned = plan_with_changes_run();
    EXPECT_TRUE(planned.plan_envelope) << planned.report.failure_message;
    if (!planned.plan_envelope) return planned;
    return run(apply_inputs(planned), script);
  }

  // A command that runs until the Run is cancelled, and the cancel, sent once it runs.
  FakeCommand cancelled_while_running() {
    FakeCommand command;
    command.wait_for_cancel = true;
    command.on_start = [this](const ProcessSpec&) {
      boost::asio::post(io_, [this] { executor_->cancel(); });
    };
    return command;
  }

  TempDir tmp_;
  // tofu itself never starts: the launcher is fake.
  RunnerSettings settings_ = [this] {
    RunnerSettings s{"/nonexistent/tofu", tmp_.path() / "mirror", tmp_.path() / "work"};
    s.source.git_cache = tmp_.path() / "cache";
    s.source.rules.file_roots = {tmp_.path()};
    s.source.fetch.helper = test_paths::githelper;
    s.tofu_timeout = 300s;
    s.kill_grace = 10s;
    return s;
  }();
  TestGitRepo repo_{tmp_.path() / "origin"};
  std::string commit_;
  crypto::BoxKeyPair control_ = crypto::BoxKeyPair::generate();
  boost::asio::io_context io_;
  boost::asio::thread_pool pool_{2};
  RunExecutor* executor_ = nullptr;
  std::vector<std::string> started_;  // the commands the last Run started
};

TEST_F(RunFlowTest, APlanRunsVersionInitPlanShowInOrderAndSealsThePlan) {
  auto planned = plan([](FakeProcessLauncher& l) {
    l.script("plan", plan_with_changes());
    l.script("show", show_plan());
  });
  ASSERT_EQ(planned.report.status, "succeeded") << planned.report.failure_message;
  EXPECT_EQ(started_, (std::vector<std::string>{"version", "init", "plan", "show"}));
  EXPECT_EQ(planned.report.tofu_version, "1.9.0");
  EXPECT_TRUE(planned.plan_envelope);
  for (const char* phase : {"checkout", "policy", "init", "plan", "freeze", "show", "encrypt"})
    EXPECT_TRUE(planned.report.phase_millis.contains(phase)) << phase;
}

TEST_F(RunFlowTest, TofuVersionIsAskedOncePerBinaryAndAgainWhenTheBinaryChanges) {
  // The launcher is fake, but the cache looks at the binary's file: make one.
  settings_.tofu_binary = tmp_.path() / "tofu";
  std::ofstream(settings_.tofu_binary) << "first build";
  settings_.tofu_versions = std::make_shared<TofuVersionCache>();
  const auto script = [](FakeProcessLauncher& l) {
    l.script("plan", plan_with_changes());
    l.script("show", show_plan());
  };
  auto first = plan(script);
  ASSERT_EQ(first.report.status, "succeeded") << first.report.failure_message;
  EXPECT_EQ(started_, (std::vector<std::string>{"version", "init", "plan", "show"}));
  auto second = plan(script);
  ASSERT_EQ(second.report.status, "succeeded") << second.report.failure_message;
  EXPECT_EQ(started_, (std::vector<std::string>{"init", "plan", "show"}));
  EXPECT_EQ(second.report.tofu_version, "1.9.0") << "the remembered version is still reported";

  // Replaced in place (an upgrade): a new identity, asked again.
  std::filesystem::remove(settings_.tofu_binary);
  std::ofstream(settings_.tofu_binary) << "second build, longer";
  auto third = plan(script);
  ASSERT_EQ(third.report.status, "succeeded") << third.report.failure_message;
  EXPECT_EQ(started_, (std::vector<std::string>{"version", "init", "plan", "show"}));
}

TEST_F(RunFlowTest, AFailedInitIsTheInitFailureWithTofusDiagnostics) {
  auto r = plan([](FakeProcessLauncher& l) {
    FakeCommand init;
    init.exit_code = 1;
    init.stderr_lines = {"Error: Failed to query available provider packages"};
    l.script("init", std::move(init));
  });
  EXPECT_EQ(r.report.status, "failed");
  EXPECT_EQ(r.report.failure_code, "opentofu_init_failed");
  EXPECT_NE(r.report.failure_message.find("Failed to query available provider packages"),
            std::string::npos)
      << r.report.failure_message;
  EXPECT_EQ(started_, (std::vector<std::string>{"version", "init"}));
}

TEST_F(RunFlowTest, APlanExitingOneIsThePlanFailureAndSealsNothing) {
  auto r = plan([](FakeProcessLauncher& l) {
    FakeCommand failed;
    failed.exit_code = 1;
    failed.stderr_lines = {"Error: Unsupported argument"};
    l.script("plan", std::move(failed));
  });
  EXPECT_EQ(r.report.failure_code, "opentofu_plan_failed");
  EXPECT_NE(r.report.failure_message.find("tofu plan failed (exit 1)"), std::string::npos)
      << r.report.failure_message;
  EXPECT_FALSE(r.plan_envelope);
  EXPECT_TRUE(r.report.plan_digest.empty());
}

TEST_F(RunFlowTest, ACancelDuringThePlanEndsTheRunCancelled) {
  auto r = plan([this](FakeProcessLauncher& l) { l.script("plan", cancelled_while_running()); });
  EXPECT_EQ(r.report.failure_code, "cancelled");
  EXPECT_FALSE(r.plan_envelope);
  // Nothing more starts after the cancel.
  EXPECT_EQ(started_, (std::vector<std::string>{"version", "init", "plan"}));
}

TEST_F(RunFlowTest, ACancelDuringTheApplyEndsTheRunCancelledAndKeepsTheStateItWrote) {
  auto r = apply([this](FakeProcessLauncher& l) {
    l.script("show", show_plan());
    FakeCommand apply = cancelled_while_running();
    apply.on_start = [this, wrote = apply_writing_state(0).on_start](const ProcessSpec& spec) {
      wrote(spec);
      boost::asio::post(io_, [this] { executor_->cancel(); });
    };
    l.script("apply", std::move(apply));
  });
  EXPECT_EQ(r.report.failure_code, "cancelled");
  EXPECT_TRUE(r.state_envelope);
  ASSERT_TRUE(r.report.new_state);
  EXPECT_EQ(r.report.new_state->serial, 1);
}

TEST_F(RunFlowTest, AFailedApplyIsTheApplyFailureAndKeepsTheStateItWrote) {
  auto r = apply([](FakeProcessLauncher& l) {
    l.script("show", show_plan());
    l.script("apply", apply_writing_state(1));
  });
  EXPECT_EQ(r.report.failure_code, "apply_failed");
  EXPECT_TRUE(r.state_envelope);
  EXPECT_TRUE(r.report.outputs.empty());
  // The plan's sensitive values came sealed with the plan: no `tofu show` of it again.
  EXPECT_EQ(started_, (std::vector<std::string>{"version", "init", "apply"}));
}

// OpenTofu applies a saved plan only with the version that made it: another one is refused
// before anything but `tofu version` runs, and the same one goes on.
TEST_F(RunFlowTest, AnApplyRunsOnlyWithTheOpenTofuVersionThatMadeItsPlan) {
  auto planned = plan_with_changes_run();
  ASSERT_TRUE(planned.plan_envelope) << planned.report.failure_message;
  auto other = apply_inputs(planned);
  other.manifest.saved_plan->tofu_version = "1.8.5";
  auto refused = run(std::move(other), [](FakeProcessLauncher&) {});
  EXPECT_EQ(refused.report.failure_code, "opentofu_version_unavailable");
  EXPECT_NE(refused.report.failure_message.find(
                "the plan was made with OpenTofu 1.8.5, and tofu.binary is 1.9.0"),
            std::string::npos) << refused.report.failure_message;
  EXPECT_EQ(started_, (std::vector<std::string>{"version"}));

  auto same = apply_inputs(planned);
  same.manifest.saved_plan->tofu_version = "1.9.0";
  auto applied = run(std::move(same), [](FakeProcessLauncher& l) {
    l.script("apply", apply_writing_state(0));
  });
  EXPECT_EQ(applied.report.status, "succeeded") << applied.report.failure_message;
}

// The plan Run seals the sensitive values its `tofu show -json` named with the plan; the apply
// redacts them from its first line on without asking tofu again.
TEST_F(RunFlowTest, AnApplyRedactsThePlansSensitiveValuesWithoutShowingThePlanAgain) {
  const std::string secret = "plan-only-secret-9f8e7d6c5b4a";
  FakeCommand show;
  show.captured_stdout =
      R"({"format_version":"1.2","resource_changes":[{"address":"terraform_data.a",)"
      R"("type":"terraform_data","change":{"actions":["create"],"after":{"input":")" +
      secret + R"("},"after_sensitive":{"input":true}}}]})";
  auto planned = plan([&](FakeProcessLauncher& l) {
    l.script("plan", plan_with_changes());
    l.script("show", show);
  });
  ASSERT_TRUE(planned.plan_envelope) << planned.report.failure_message;
  FakeCommand apply = apply_writing_state(0);
  apply.stdout_lines = {"terraform_data.a: Creating... [input=" + secret + "]"};
  std::string log;
  auto applied = run(
      apply_inputs(planned), [&](FakeProcessLauncher& l) { l.script("apply", apply); },
      [&log](std::string_view line) { log += std::string(line) + "\n"; });
  EXPECT_EQ(applied.report.status, "succeeded") << applied.report.failure_message;
  EXPECT_EQ(started_, (std::vector<std::string>{"version", "init", "apply"}));
  EXPECT_EQ(log.find(secret), std::string::npos) << log;
  EXPECT_NE(log.find("Creating... [input=[REDACTED]]"), std::string::npos) << log;
}

// A plan sealed by an agent before plan contents is the bare plan file: the apply takes it as it
// is and runs `tofu show -json` of it for the sensitive values, as it always did.
TEST_F(RunFlowTest, AnOlderAgentsBarePlanIsAppliedAfterShowingIt) {
  const auto bare_plan = tmp_.path() / "bare.tfplan";
  ASSERT_TRUE(write_file_atomic(bare_plan, "PK\3\4 an older agent's plan file"));
  const auto manifest = this->manifest("run_plan", protocol::RunType::plan);
  auto key = crypto::BoxPublicKey::from_base64(manifest.control_public_key);
  ASSERT_TRUE(key);
  crypto::EnvelopeHeader header;
  header.kind = "plan";
  header.capsule_id = manifest.capsule_id;
  header.run_id = manifest.run_id;
  header.key_id = manifest.control_key_id;
  const auto envelope = tmp_.path() / "bare.plan.env";
  auto sealed = crypto::encrypt_file(bare_plan, envelope, header, *key);
  ASSERT_TRUE(sealed) << sealed.error().to_string();
  RunOutcome planned;
  planned.plan_envelope = envelope;
  planned.report.plan_digest = sealed->header.plaintext_sha256;
  auto applied = run(apply_inputs(planned), [](FakeProcessLauncher& l) {
    l.script("show", show_plan());
    l.script("apply", apply_writing_state(0));
  });
  EXPECT_EQ(applied.report.status, "succeeded") << applied.report.failure_message;
  EXPECT_EQ(started_, (std::vector<std::string>{"version", "init", "show", "apply"}));
}

TEST_F(RunFlowTest, AFailedApplyThatWroteNoStateIsTheApplyFailureAlone) {
  auto r = apply([](FakeProcessLauncher& l) {
    l.script("show", show_plan());
    FakeCommand failed;
    failed.exit_code = 1;
    l.script("apply", std::move(failed));
  });
  EXPECT_EQ(r.report.failure_code, "apply_failed");
  EXPECT_FALSE(r.state_envelope);
  EXPECT_FALSE(r.report.new_state);
}

// limits.maxStateBytes reaches the step that reads the new state: a state over it is stored all
// the same (never lost), and the Run fails so the operator sees the limit.
TEST_F(RunFlowTest, ANewStateOverTheConfiguredLimitIsStoredAndTheRunFails) {
  settings_.max_state_bytes = 4096;
  auto r = apply([](FakeProcessLauncher& l) {
    l.script("show", show_plan());
    l.script("apply", apply_writing_state(0, 8192));
  });
  EXPECT_EQ(r.report.failure_code, "limit_exceeded");
  EXPECT_NE(r.report.failure_message.find("limits.maxStateBytes (4096)"), std::string::npos)
      << r.report.failure_message;
  EXPECT_TRUE(r.state_envelope);
  EXPECT_TRUE(r.report.new_state);
}

TEST_F(RunFlowTest, AnApplyIsRefusedBeforeTofuStartsWhenBeforeApplyFails) {
  // A stale lease (fencing): nothing is applied.
  auto planned = plan_with_changes_run();
  ASSERT_TRUE(planned.plan_envelope);
  RunInputs in = apply_inputs(planned);
  in.before_apply = []() -> boost::asio::awaitable<Status> {
    co_return fail("lease_lost", "the lease was lost");
  };
  auto r = run(std::move(in), [](FakeProcessLauncher& l) { l.script("show", show_plan()); });
  EXPECT_EQ(r.report.failure_code, "lease_lost");
  EXPECT_EQ(std::count(started_.begin(), started_.end(), "apply"), 0);
}

}  // namespace
}  // namespace takosumi::runner
