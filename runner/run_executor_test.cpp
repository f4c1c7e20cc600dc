// End to end with the real OpenTofu, the real provider mirror and real Git repositories.
#include "runner/run_executor.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "common/file_io.hpp"
#include "crypto/envelope.hpp"
#include "crypto/sha256.hpp"
#include "tests/support/run_to_end.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_manifest.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using takosumi::testing::TempDir;
using takosumi::testing::TestGitRepo;

constexpr const char* kModule = R"(
variable "name" { type = string }
variable "out_dir" { type = string }
resource "terraform_data" "a" { input = var.name }
resource "local_file" "f" {
  filename = "${var.out_dir}/hello.txt"
  content  = "hello ${var.name}"
}
output "name" { value = terraform_data.a.output }
output "count" { value = 3 }
output "secret" {
  value     = "s3cr3t-${var.name}"
  sensitive = true
}
)";

class RunExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(test_paths::tofu)) << "missing " << test_paths::tofu;
    ASSERT_TRUE(fs::exists(test_paths::provider_mirror)) << "missing " << test_paths::provider_mirror;
    commit_ = repo_.commit({{"README.md", "capsule"}, {"infra/main.tf", kModule}});
  }

  RunnerSettings settings() const {
    RunnerSettings s{test_paths::tofu, test_paths::provider_mirror, tmp_.path() / "work"};
    s.source.git_cache = tmp_.path() / "cache";
    s.source.rules.file_roots = {tmp_.path()};
    s.source.fetch.helper = test_paths::githelper;
    s.tofu_timeout = 300s;
    s.kill_grace = 10s;
    s.init_cache_dir = init_cache_;
    return s;
  }

  protocol::JobManifest manifest(const std::string& run_id, protocol::RunType type,
                                 const std::string& name) const {
    auto m = testing::test_manifest(run_id, type, {repo_.url(), commit_, "infra"},
                                    control_.public_key);
    // local_file writes outside the Run's workspace, which is wiped after every Run.
    m.variables = {{"name", boost::json::string(name)},
                   {"out_dir", boost::json::string((tmp_.path() / "files").string())}};
    m.output_allowlist = {{"publicName", {"name", "string", true}},
                          {"n", {"count", "number", false}},
                          {"pw", {"secret", "string", false}}};
    return m;
  }

  RunOutcome run(RunInputs inputs, std::function<void(std::string_view)> on_line = nullptr) {
    RunExecutor executor(io_.get_executor(), pool_, settings());
    auto sink = [&](std::string_view line) {
      log_.emplace_back(line);
      if (on_line) on_line(line);
    };
    executor_ = &executor;
    inputs.outbox = tmp_.path() / "outbox";
    const std::string workspace_name = inputs.manifest.run_id + "-1";
    auto outcome = testing::run_to_end(io_, executor.async_run(std::move(inputs), sink));
    executor_ = nullptr;
    EXPECT_FALSE(fs::exists(tmp_.path() / "work" / workspace_name))
        << "workspace left behind";
    return outcome;
  }

  RunOutcome plan(const std::string& run_id, const std::string& name,
                  std::optional<protocol::PriorState> prior = std::nullopt,
                  std::optional<fs::path> prior_envelope = std::nullopt) {
    RunInputs in{manifest(run_id, protocol::RunType::plan, name)};
    in.manifest.prior_state = std::move(prior);
    if (prior_envelope) {
      in.prior_state_envelope = *prior_envelope;
      in.prior_state_dek = dek_of(*prior_envelope);
    }
    return run(std::move(in));
  }

  // A plan-like Run (plan, destroy_plan, drift_check) against an optional prior StateVersion.
  RunOutcome run_as(protocol::RunType type, const std::string& run_id, const std::string& name,
                    std::optional<protocol::PriorState> prior = std::nullopt,
                    std::optional<fs::path> prior_envelope = std::nullopt) {
    RunInputs in{manifest(run_id, type, name)};
    in.manifest.prior_state = std::move(prior);
    if (prior_envelope) {
      in.prior_state_envelope = *prior_envelope;
      in.prior_state_dek = dek_of(*prior_envelope);
    }
    return run(std::move(in));
  }

  // Plans and applies "alpha" from nothing; the result is StateVersion generation 1.
  RunOutcome applied_alpha() {
    auto planned = plan("p_alpha", "alpha");
    EXPECT_TRUE(planned.plan_envelope) << planned.report.failure_message;
    if (!planned.plan_envelope) return planned;
    auto applied = apply("a_alpha", planned.report.plan_digest, *planned.plan_envelope);
    EXPECT_EQ(applied.report.status, "succeeded") << applied.report.failure_message;
    EXPECT_TRUE(applied.state_envelope);
    return applied;
  }

  // The decrypted state of a state envelope, as the control plane would read it.
  boost::json::object state_of(const fs::path& envelope) const {
    const fs::path out = tmp_.path() / "opened.tfstate";
    fs::remove(out);
    auto header = crypto::decrypt_file(envelope, out, dek_of(envelope), {"state", "cap_1"});
    EXPECT_TRUE(header) << header.error().to_string();
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return header ? boost::json::parse(text).as_object() : boost::json::object{};
  }

  // A drift check must leave nothing to upload, whatever it found.
  void expect_read_only(const RunOutcome& o, const std::string& run_id) const {
    EXPECT_FALSE(o.plan_envelope);
    EXPECT_FALSE(o.state_envelope);
    EXPECT_FALSE(o.report.new_state);
    EXPECT_TRUE(o.report.plan_digest.empty());
    EXPECT_TRUE(o.report.outputs.empty());
    EXPECT_TRUE(o.report.data_loss.empty());
    if (!fs::exists(tmp_.path() / "outbox")) return;
    for (const auto& e : fs::directory_iterator(tmp_.path() / "outbox"))
      EXPECT_FALSE(e.path().filename().string().starts_with(run_id + "-")) << e.path();
  }

  RunOutcome apply(const std::string& run_id, const std::string& approved_digest,
                   const fs::path& plan_envelope,
                   std::optional<protocol::PriorState> prior = std::nullopt,
                   std::optional<fs::path> prior_envelope = std::nullopt,
                   std::function<void(std::string_view)> on_line = nullptr) {
    RunInputs in{manifest(run_id, protocol::RunType::apply, "ignored")};
    in.manifest.saved_plan = protocol::SavedPlanRef{approved_digest, "unused-in-tests"};
    in.manifest.prior_state = std::move(prior);
    in.plan_envelope = plan_envelope;
    in.plan_dek = dek_of(plan_envelope);
    if (prior_envelope) {
      in.prior_state_envelope = *prior_envelope;
      in.prior_state_dek = dek_of(*prior_envelope);
    }
    return run(std::move(in), std::move(on_line));
  }

  // What the control plane does with its storage key (and re-seals to the agent).
  SecretBytes dek_of(const fs::path& envelope) const {
    auto prefix = crypto::read_envelope_prefix(envelope);
    EXPECT_TRUE(prefix) << prefix.error().to_string();
    if (!prefix) return {};
    auto dek = crypto::open_envelope_dek(*prefix, control_);
    EXPECT_TRUE(dek) << dek.error().to_string();
    return dek ? std::move(*dek) : SecretBytes{};
  }

  crypto::EnvelopeHeader header_of(const fs::path& envelope) const {
    auto prefix = crypto::read_envelope_prefix(envelope);
    EXPECT_TRUE(prefix) << prefix.error().to_string();
    return prefix ? prefix->header : crypto::EnvelopeHeader{};
  }

  // The StateVersion the control plane would record for an apply's new state.
  protocol::PriorState prior_from(const RunOutcome& applied, std::int64_t generation) const {
    const auto& s = *applied.report.new_state;
    return {"sv_" + std::to_string(generation), generation, s.plaintext_sha256, s.serial, s.lineage,
            "unused-in-tests"};
  }

  bool log_contains(std::string_view needle) const {
    for (const auto& l : log_)
      if (l.find(needle) != std::string::npos) return true;
    return false;
  }

  TempDir tmp_;
  TestGitRepo repo_{tmp_.path() / "origin"};
  std::string commit_;
  crypto::BoxKeyPair control_ = crypto::BoxKeyPair::generate();
  boost::asio::io_context io_;
  boost::asio::thread_pool pool_{2};
  fs::path init_cache_;  // empty: every Run runs init
  RunExecutor* executor_ = nullptr;
  std::vector<std::string> log_;
};

TEST_F(RunExecutorTest, ARunOfTheSameConfigurationStartsFromTheVerifiedInitResult) {
  init_cache_ = tmp_.path() / "init-cache";
  auto first = plan("p_first", "alpha");
  ASSERT_EQ(first.report.status, "succeeded") << first.report.failure_message;
  EXPECT_TRUE(first.report.phase_millis.contains("init"));
  ASSERT_EQ(std::distance(fs::directory_iterator(init_cache_), fs::directory_iterator()), 1);
  const fs::path entry = fs::directory_iterator(init_cache_)->path();
  EXPECT_EQ(fs::status(entry).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);

  log_.clear();
  auto second = plan("p_second", "alpha");
  ASSERT_EQ(second.report.status, "succeeded") << second.report.failure_message;
  EXPECT_FALSE(second.report.phase_millis.contains("init")) << "init did not run";
  EXPECT_TRUE(second.report.phase_millis.contains("init_cache"));
  EXPECT_EQ(second.report.summary.add, first.report.summary.add);
  EXPECT_EQ(second.report.provider_lock_sha256, first.report.provider_lock_sha256);
  EXPECT_TRUE(std::any_of(log_.begin(), log_.end(),
                          [](const std::string& l) { return l.find("init: the verified result") != std::string::npos; }));
  // A plan made from the reused result applies like any other.
  ASSERT_TRUE(second.plan_envelope);
  auto applied = apply("a_second", second.report.plan_digest, *second.plan_envelope);
  EXPECT_EQ(applied.report.status, "succeeded") << applied.report.failure_message;

  // Other variables are other inputs to init: it runs.
  auto other = plan("p_other", "beta");
  ASSERT_EQ(other.report.status, "succeeded") << other.report.failure_message;
  EXPECT_TRUE(other.report.phase_millis.contains("init"));

  // A damaged entry is never used: init runs, and a sound entry takes its place.
  std::string text = read_file(entry, 1 << 20).value();
  text[text.size() / 2] ^= 1;
  ASSERT_TRUE(write_file_atomic(entry, text));
  auto damaged = plan("p_damaged", "alpha");
  ASSERT_EQ(damaged.report.status, "succeeded") << damaged.report.failure_message;
  EXPECT_TRUE(damaged.report.phase_millis.contains("init"));
  auto again = plan("p_again", "alpha");
  EXPECT_FALSE(again.report.phase_millis.contains("init"));
}

TEST_F(RunExecutorTest, PlanThenApplyProducesEnvelopesAndPublicOutputs) {
  auto planned = plan("run_plan", "alpha");
  const auto& pr = planned.report;
  ASSERT_EQ(pr.status, "succeeded") << pr.failure_code << ": " << pr.failure_message;
  EXPECT_TRUE(pr.has_changes);
  EXPECT_EQ(pr.summary.add, 2);
  EXPECT_EQ(pr.resource_changes.size(), 2u);
  EXPECT_EQ(pr.source_commit, commit_);
  EXPECT_EQ(pr.tofu_version, "1.12.6");
  EXPECT_FALSE(pr.provider_lock_sha256.empty());
  EXPECT_NE(std::find(pr.env_names.begin(), pr.env_names.end(), "TF_CLI_CONFIG_FILE"), pr.env_names.end());
  for (const char* phase : {"checkout", "init", "plan", "show", "encrypt"})
    EXPECT_TRUE(pr.phase_millis.contains(phase)) << phase;
  EXPECT_TRUE(pr.outputs.empty());
  EXPECT_FALSE(planned.state_envelope);
  ASSERT_TRUE(planned.plan_envelope);
  EXPECT_EQ(planned.plan_envelope->parent_path(), tmp_.path() / "outbox");
  EXPECT_EQ(pr.plan_artifact_sha256, crypto::sha256_file_hex(*planned.plan_envelope).value());

  // The control plane can open the plan, and it is the plan the digest names.
  const auto plan_header = header_of(*planned.plan_envelope);
  EXPECT_EQ(plan_header.kind, "plan");
  EXPECT_EQ(plan_header.capsule_id, "cap_1");
  EXPECT_EQ(plan_header.run_id, "run_plan");
  EXPECT_EQ(plan_header.generation, 0);
  EXPECT_EQ(plan_header.key_id, "k1");
  const fs::path opened = tmp_.path() / "opened.tfplan";
  auto decrypted = crypto::decrypt_file(*planned.plan_envelope, opened,
                                        dek_of(*planned.plan_envelope), {"plan", "cap_1"});
  ASSERT_TRUE(decrypted) << decrypted.error().to_string();
  EXPECT_EQ(crypto::sha256_file_hex(opened).value(), pr.plan_digest);

  auto applied = apply("run_apply", pr.plan_digest, *planned.plan_envelope);
  const auto& ar = applied.report;
  ASSERT_EQ(ar.status, "succeeded") << ar.failure_code << ": " << ar.failure_message;
  ASSERT_TRUE(applied.state_envelope);
  EXPECT_FALSE(applied.plan_envelope);
  ASSERT_TRUE(ar.new_state);
  EXPECT_EQ(ar.new_state->prior_generation, 0);
  EXPECT_GE(ar.new_state->serial, 1);
  EXPECT_FALSE(ar.new_state->lineage.empty());
  EXPECT_EQ(ar.new_state->artifact_sha256, crypto::sha256_file_hex(*applied.state_envelope).value());
  const auto state_header = header_of(*applied.state_envelope);
  EXPECT_EQ(state_header.kind, "state");
  EXPECT_EQ(state_header.generation, 1);
  EXPECT_EQ(state_header.serial, ar.new_state->serial);
  EXPECT_EQ(state_header.lineage, ar.new_state->lineage);
  EXPECT_EQ(state_header.plaintext_sha256, ar.new_state->plaintext_sha256);
  for (const char* phase : {"decrypt", "init", "apply", "encrypt"})
    EXPECT_TRUE(ar.phase_millis.contains(phase)) << phase;

  // Only mapped, non-sensitive outputs, under their public names.
  EXPECT_EQ(ar.outputs.size(), 2u);
  EXPECT_EQ(ar.outputs.at("publicName"), "alpha");
  EXPECT_EQ(ar.outputs.at("n"), 3);
  EXPECT_FALSE(ar.outputs.contains("pw"));
  EXPECT_TRUE(log_contains("\"secret\" (public \"pw\") is sensitive"));
  EXPECT_FALSE(log_contains("s3cr3t"));
  EXPECT_TRUE(log_contains("Apply complete!"));
  EXPECT_TRUE(fs::exists(tmp_.path() / "files" / "hello.txt"));
}

TEST_F(RunExecutorTest, ApplyOfAnotherValidPlanIsRefusedAndAppliesNothing) {
  auto approved = plan("run_a", "alpha");
  auto other = plan("run_b", "beta");
  ASSERT_TRUE(approved.plan_envelope && other.plan_envelope);
  ASSERT_NE(approved.report.plan_digest, other.report.plan_digest);

  log_.clear();
  auto applied = apply("run_apply", approved.report.plan_digest, *other.plan_envelope);
  const auto& r = applied.report;
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.failure_code, "plan_digest_mismatch");
  EXPECT_NE(r.failure_message.find(approved.report.plan_digest), std::string::npos);
  EXPECT_FALSE(applied.state_envelope);
  EXPECT_FALSE(r.new_state);
  EXPECT_FALSE(r.phase_millis.contains("apply"));
  EXPECT_FALSE(r.phase_millis.contains("init"));
  EXPECT_FALSE(log_contains("Apply complete"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "outbox" / "run_apply-1.state.env"));
}

TEST_F(RunExecutorTest, PriorStateIsCarriedAndGenerationsAdvance) {
  auto first = plan("p1", "alpha");
  auto applied = apply("a1", first.report.plan_digest, *first.plan_envelope);
  ASSERT_EQ(applied.report.status, "succeeded") << applied.report.failure_message;
  const auto prior = prior_from(applied, 1);

  // Same inputs against the stored state: nothing to do, no plan envelope.
  auto unchanged = plan("p2", "alpha", prior, *applied.state_envelope);
  ASSERT_EQ(unchanged.report.status, "succeeded") << unchanged.report.failure_message;
  EXPECT_FALSE(unchanged.report.has_changes);
  EXPECT_FALSE(unchanged.plan_envelope);

  auto changed = plan("p3", "gamma", prior, *applied.state_envelope);
  ASSERT_EQ(changed.report.status, "succeeded") << changed.report.failure_message;
  EXPECT_EQ(changed.report.summary.change, 1);   // terraform_data updates in place
  EXPECT_EQ(changed.report.summary.replace, 1);  // local_file content forces a new file
  EXPECT_EQ(header_of(*changed.plan_envelope).generation, 1);
  EXPECT_EQ(header_of(*changed.plan_envelope).lineage, prior.lineage);

  auto second = apply("a2", changed.report.plan_digest, *changed.plan_envelope, prior,
                      *applied.state_envelope);
  ASSERT_EQ(second.report.status, "succeeded") << second.report.failure_message;
  ASSERT_TRUE(second.report.new_state);
  EXPECT_EQ(second.report.new_state->prior_generation, 1);
  EXPECT_EQ(second.report.new_state->lineage, prior.lineage);
  EXPECT_GT(second.report.new_state->serial, prior.serial);
  EXPECT_EQ(header_of(*second.state_envelope).generation, 2);
  EXPECT_EQ(second.report.outputs.at("publicName"), "gamma");
}

TEST_F(RunExecutorTest, TamperedOrSwappedPriorStateIsRefused) {
  auto first = plan("p1", "alpha");
  auto applied = apply("a1", first.report.plan_digest, *first.plan_envelope);
  ASSERT_EQ(applied.report.status, "succeeded") << applied.report.failure_message;
  const auto prior = prior_from(applied, 1);

  const fs::path tampered = tmp_.path() / "tampered.env";
  fs::copy_file(*applied.state_envelope, tampered);
  {
    // Flip bits rather than write a constant: a constant equal to the byte there tampers nothing.
    std::fstream f(tampered, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-5, std::ios::end);
    const char original = static_cast<char>(f.get());
    f.seekp(-5, std::ios::end);
    f.put(static_cast<char>(original ^ 0x5a));
  }
  auto r = plan("p2", "alpha", prior, tampered);
  EXPECT_EQ(r.report.status, "failed");
  EXPECT_EQ(r.report.failure_code, "state_integrity_failed");
  EXPECT_NE(r.report.failure_message.find("envelope_"), std::string::npos) << r.report.failure_message;
  EXPECT_FALSE(r.report.phase_millis.contains("init"));

  auto replayed = prior;
  replayed.generation = 2;  // the manifest says generation 2; the envelope holds generation 1
  auto swapped = plan("p3", "alpha", replayed, *applied.state_envelope);
  EXPECT_EQ(swapped.report.failure_code, "state_integrity_failed");
  EXPECT_NE(swapped.report.failure_message.find("envelope_header_mismatch"), std::string::npos)
      << swapped.report.failure_message;
}

TEST_F(RunExecutorTest, MissingCommitFailsBeforeAnyTofu) {
  RunInputs in{manifest("run_missing", protocol::RunType::plan, "alpha")};
  in.manifest.source.commit = std::string(40, 'c');
  auto r = run(std::move(in)).report;
  EXPECT_EQ(r.failure_code, "source_commit_missing");
  EXPECT_NE(r.failure_message.find(std::string(40, 'c')), std::string::npos);
  EXPECT_TRUE(r.tofu_version.empty());
}

// The agent delivers a Run's outcome while its sandbox ends and its workspace goes: the outcome is
// final when async_run returns (the artifacts in the outbox), the workspace only after the release.
TEST_F(RunExecutorTest, AnOutcomeReleasedLaterIsFinalAndTheWorkspaceGoesAtTheRelease) {
  RunExecutor executor(io_.get_executor(), pool_, settings());
  RunInputs inputs{manifest("run_later", protocol::RunType::plan, "alpha")};
  inputs.outbox = tmp_.path() / "outbox";
  const fs::path workspace = tmp_.path() / "work" / "run_later-1";
  auto outcome = testing::run_to_end(
      io_, executor.async_run(std::move(inputs), nullptr, RunExecutor::Release::later));
  ASSERT_EQ(outcome.report.status, "succeeded") << outcome.report.failure_code << ": "
                                                << outcome.report.failure_message;
  ASSERT_TRUE(outcome.plan_envelope);
  EXPECT_TRUE(fs::exists(*outcome.plan_envelope));
  EXPECT_TRUE(fs::exists(workspace)) << "released only by async_release";
  testing::run_to_end(io_, [&]() -> boost::asio::awaitable<int> {
    co_await executor.async_release();
    co_return 0;
  }());
  EXPECT_FALSE(fs::exists(workspace)) << "workspace left behind";
  EXPECT_TRUE(fs::exists(*outcome.plan_envelope)) << "the outbox is the caller's";
}

TEST_F(RunExecutorTest, PlanFailureCarriesTofuDiagnostics) {
  commit_ = repo_.commit({{"infra/main.tf", "output \"x\" { value = terraform_data.nope.id }\n"}});
  auto r = plan("run_bad", "alpha").report;
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.failure_code, "opentofu_plan_failed");
  EXPECT_NE(r.failure_message.find("tofu plan failed (exit 1)"), std::string::npos) << r.failure_message;
  EXPECT_NE(r.failure_message.find("Reference to undeclared resource"), std::string::npos)
      << r.failure_message;
}

TEST_F(RunExecutorTest, CancelDuringApplyInterruptsTofuAndKeepsWhatChanged) {
  commit_ = repo_.commit({{"infra/main.tf", R"(
resource "terraform_data" "first" { input = "x" }
resource "time_sleep" "slow" {
  depends_on      = [terraform_data.first]
  create_duration = "120s"
}
)"}});
  auto planned = plan("run_p", "alpha");
  ASSERT_TRUE(planned.plan_envelope) << planned.report.failure_message;
  bool asked = false;
  auto applied = apply("run_a", planned.report.plan_digest, *planned.plan_envelope, std::nullopt,
                       std::nullopt, [&](std::string_view line) {
                         if (!asked && line.find("time_sleep.slow: Creating...") != std::string_view::npos) {
                           asked = true;
                           executor_->cancel();
                         }
                       });
  ASSERT_TRUE(asked);
  EXPECT_EQ(applied.report.status, "failed");
  EXPECT_EQ(applied.report.failure_code, "cancelled") << applied.report.failure_message;
  // terraform_data.first was created before the interrupt: that state comes back.
  ASSERT_TRUE(applied.state_envelope);
  ASSERT_TRUE(applied.report.new_state);
  EXPECT_EQ(header_of(*applied.state_envelope).generation, 1);
}

TEST_F(RunExecutorTest, DestroyPlanThenApplyLeavesAnEmptyStateVersion) {
  auto applied = applied_alpha();
  ASSERT_TRUE(applied.state_envelope);
  const auto prior = prior_from(applied, 1);
  ASSERT_TRUE(fs::exists(tmp_.path() / "files" / "hello.txt"));

  auto destroy = run_as(protocol::RunType::destroy_plan, "d1", "alpha", prior, *applied.state_envelope);
  const auto& dr = destroy.report;
  ASSERT_EQ(dr.status, "succeeded") << dr.failure_code << ": " << dr.failure_message;
  EXPECT_TRUE(dr.has_changes);
  EXPECT_EQ(dr.summary.destroy, 2);
  EXPECT_EQ(dr.summary.add + dr.summary.change + dr.summary.replace, 0);
  for (const auto& c : dr.resource_changes) EXPECT_TRUE(c.is_delete && !c.is_replace) << c.address;
  // Only the file holds data; terraform_data matches no data-bearing pattern.
  ASSERT_EQ(dr.data_loss.size(), 1u);
  EXPECT_EQ(dr.data_loss[0].address, "local_file.f");
  EXPECT_EQ(dr.data_loss[0].action, "delete");
  EXPECT_NE(dr.data_loss[0].reason.find("local_file"), std::string::npos);
  EXPECT_FALSE(destroy.state_envelope);
  ASSERT_TRUE(destroy.plan_envelope);
  EXPECT_EQ(header_of(*destroy.plan_envelope).kind, "plan");
  EXPECT_EQ(header_of(*destroy.plan_envelope).generation, 1);

  // The destroy's apply is an ordinary apply of the approved plan.
  auto gone = apply("a2", dr.plan_digest, *destroy.plan_envelope, prior, *applied.state_envelope);
  const auto& gr = gone.report;
  ASSERT_EQ(gr.status, "succeeded") << gr.failure_code << ": " << gr.failure_message;
  ASSERT_TRUE(gone.state_envelope);
  ASSERT_TRUE(gr.new_state);
  EXPECT_GT(gr.new_state->serial, prior.serial);
  EXPECT_EQ(gr.new_state->lineage, prior.lineage);
  EXPECT_EQ(gr.new_state->prior_generation, 1);
  EXPECT_EQ(header_of(*gone.state_envelope).generation, 2);
  // The required output "name" is gone with everything else: no Outputs, and no failure.
  EXPECT_TRUE(gr.outputs.empty());
  const auto state = state_of(*gone.state_envelope);
  ASSERT_TRUE(state.contains("resources"));
  EXPECT_TRUE(state.at("resources").as_array().empty());
  EXPECT_EQ(state.at("serial").as_int64(), gr.new_state->serial);
  EXPECT_FALSE(fs::exists(tmp_.path() / "files" / "hello.txt"));
}

TEST_F(RunExecutorTest, DriftCheckIsReadOnlyAndNamesAFileChangedOutsideTofu) {
  auto applied = applied_alpha();
  ASSERT_TRUE(applied.state_envelope);
  const auto prior = prior_from(applied, 1);

  auto clean = run_as(protocol::RunType::drift_check, "dc1", "alpha", prior, *applied.state_envelope);
  ASSERT_EQ(clean.report.status, "succeeded") << clean.report.failure_message;
  ASSERT_TRUE(clean.report.drift);
  EXPECT_EQ(clean.report.drift->status, "no_drift");
  EXPECT_TRUE(clean.report.drift->resources.empty());
  EXPECT_FALSE(clean.report.has_changes);
  EXPECT_EQ(clean.report.tofu_version, "1.12.6");
  EXPECT_TRUE(clean.report.phase_millis.contains("plan"));
  EXPECT_FALSE(clean.report.phase_millis.contains("show"))
      << "tofu said nothing changed (-detailed-exitcode 0): nothing for show to tell";
  expect_read_only(clean, "dc1");

  const fs::path file = tmp_.path() / "files" / "hello.txt";
  std::ofstream(file) << "changed by hand";
  auto drifted = run_as(protocol::RunType::drift_check, "dc2", "alpha", prior, *applied.state_envelope);
  const auto& r = drifted.report;
  ASSERT_EQ(r.status, "succeeded") << r.failure_message;
  ASSERT_TRUE(r.drift);
  EXPECT_EQ(r.drift->status, "drift");
  EXPECT_TRUE(r.has_changes);
  EXPECT_TRUE(r.phase_millis.contains("show"));
  ASSERT_EQ(r.drift->resources.size(), 1u);
  const auto& d = r.drift->resources[0];
  EXPECT_EQ(d.address, "local_file.f");
  EXPECT_EQ(d.type, "local_file");
  EXPECT_NE(d.action.find("delete"), std::string::npos) << d.action;
  EXPECT_EQ(d.attributes, std::vector<std::string>{"(deleted)"});
  expect_read_only(drifted, "dc2");
  // What drifted, rendered from the frozen refresh-only plan (tofu's own text is withheld).
  EXPECT_TRUE(log_contains("what changed outside OpenTofu, from the refresh-only plan:"));
  EXPECT_TRUE(log_contains("  # local_file.f has been deleted outside OpenTofu"));
  EXPECT_FALSE(log_contains("changed by hand"));
  // Reported, never fixed.
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
            "changed by hand");
}

TEST_F(RunExecutorTest, DriftCheckIgnoresAnOutputThatOnlyChangedInTheModule) {
  auto applied = applied_alpha();
  ASSERT_TRUE(applied.state_envelope);
  const auto prior = prior_from(applied, 1);
  std::string changed_output = kModule;
  const auto at = changed_output.find("value = 3");
  ASSERT_NE(at, std::string::npos);
  changed_output.replace(at, 9, "value = 4");
  commit_ = repo_.commit({{"infra/main.tf", changed_output}});

  // tofu exits 2 here (the output would change), which is not drift of any real object.
  auto r = run_as(protocol::RunType::drift_check, "dc", "alpha", prior, *applied.state_envelope);
  ASSERT_EQ(r.report.status, "succeeded") << r.report.failure_message;
  ASSERT_TRUE(r.report.drift);
  EXPECT_EQ(r.report.drift->status, "no_drift");
  EXPECT_TRUE(r.report.drift->resources.empty());
  EXPECT_FALSE(r.report.has_changes);
  expect_read_only(r, "dc");
}

TEST_F(RunExecutorTest, DriftCheckWithoutAStateIsNoDriftWithoutTofu) {
  auto r = run_as(protocol::RunType::drift_check, "dc", "alpha");
  ASSERT_EQ(r.report.status, "succeeded") << r.report.failure_message;
  ASSERT_TRUE(r.report.drift);
  EXPECT_EQ(r.report.drift->status, "no_drift");
  EXPECT_TRUE(r.report.tofu_version.empty());
  expect_read_only(r, "dc");
}

TEST_F(RunExecutorTest, FailedDriftCheckReportsDriftError) {
  auto applied = applied_alpha();
  ASSERT_TRUE(applied.state_envelope);
  commit_ = repo_.commit({{"infra/main.tf", "output \"x\" { value = terraform_data.nope.id }\n"}});
  auto r = run_as(protocol::RunType::drift_check, "dc", "alpha", prior_from(applied, 1),
                  *applied.state_envelope);
  EXPECT_EQ(r.report.status, "failed");
  EXPECT_EQ(r.report.failure_code, "opentofu_plan_failed") << r.report.failure_message;
  ASSERT_TRUE(r.report.drift);
  EXPECT_EQ(r.report.drift->status, "error");
  EXPECT_TRUE(r.report.drift->resources.empty());
  expect_read_only(r, "dc");
}

TEST_F(RunExecutorTest, ReplacingAFileIsMarkedDataLoss) {
  auto applied = applied_alpha();
  ASSERT_TRUE(applied.state_envelope);
  std::string renamed = kModule;
  const auto at = renamed.find("hello.txt");
  ASSERT_NE(at, std::string::npos);
  renamed.replace(at, 9, "renamed.txt");
  commit_ = repo_.commit({{"infra/main.tf", renamed}});

  auto r = plan("p2", "alpha", prior_from(applied, 1), *applied.state_envelope);
  ASSERT_EQ(r.report.status, "succeeded") << r.report.failure_message;
  EXPECT_EQ(r.report.summary.replace, 1);
  ASSERT_EQ(r.report.data_loss.size(), 1u);
  const auto& mark = r.report.data_loss[0];
  EXPECT_EQ(mark.address, "local_file.f");
  EXPECT_EQ(mark.type, "local_file");
  EXPECT_EQ(mark.action, "replace");
  EXPECT_NE(mark.reason.find("local_file matches data-bearing pattern local_file"), std::string::npos)
      << mark.reason;
  EXPECT_FALSE(r.report.drift);
}

}  // namespace
}  // namespace takosumi::runner
