#include "runner/run_flow.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_fields.hpp"
#include "common/offload.hpp"
#include "crypto/sha256.hpp"
#include "protocol/failure_codes.hpp"
#include "redaction/bundle_secrets.hpp"
#include "runner/phases/phase_timer.hpp"
#include "runner/phases/apply_phase.hpp"
#include "runner/phases/drift_phase.hpp"
#include "runner/phases/init_cache.hpp"
#include "runner/phases/plan_phase.hpp"
#include "runner/phases/provider_checks.hpp"
#include "runner/source/git_source.hpp"
#include "runner/state/run_restore.hpp"
#include "runner/state/state_file.hpp"
#include "runner/tofu/limit_failure.hpp"
#include "runner/run_tofu_request.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::unexpected<Error> workspace_error(const Error& e, std::string_view what) {
  return std::unexpected(protocol::as_run_failure(e, errc::kWorkspaceFailed).with_context(what));
}

}  // namespace

RunFlow::RunFlow(asio::thread_pool& blocking, const RunnerSettings& settings,
                 ProcessLauncher& launcher, CancelSignal& cancel, RunInputs& inputs, redaction::LogSink log,
                 RunOutcome& outcome)
    : blocking_(blocking),
      settings_(settings),
      launcher_(launcher),
      cancel_(cancel),
      inputs_(inputs),
      manifest_(inputs.manifest),
      log_(std::move(log)),
      outcome_(outcome),
      report_(outcome.report),
      deadline_(Clock::now() + settings.tofu_timeout),
      secrets_(*inputs.secret_set),
      policy_(protocol::combine(settings.policy, inputs.manifest.policy)) {}

RunFlow::~RunFlow() {
  if (credentials_) (void)credentials_->wipe();
  // As in async_release: the sandbox ends (killed here) and the cgroup goes before the workspace.
  tofu_.reset();
  cgroup_.reset();
  if (workspace_) (void)workspace_->wipe();
}

void RunFlow::notice(std::string_view line) const {
  if (log_) log_("takosumi: " + std::string(line));
}

// Every step of a Run, in order; the first failure ends it.
asio::awaitable<Status> RunFlow::async_execute() {
  begin_report();
  TAKOSUMI_CO_TRY(check_inputs());
  TAKOSUMI_CO_TRY(create_workspace());
  // A drift check of a Capsule never applied runs no tofu (below): nothing to check or start.
  const bool runs_tofu = manifest_.type != protocol::RunType::drift_check || manifest_.prior_state;
  // Before anything of the Run executes (a hook, tofu): the mirror against the operator's pins
  // (and below, once checked out, the lock file the module brings, if any, against them too).
  std::optional<RunProviders> providers;
  if (runs_tofu) {
    auto checked = co_await async_check_mirror();
    if (!checked) co_return std::unexpected(checked.error());
    providers = std::move(*checked);
    TAKOSUMI_CO_TRY(co_await async_make_cgroup());
  }
  // Side by side: the checkout first (on the blocking pool, with its Git helper), then, while it
  // runs, the sandbox's spawn (on this thread: see PhaseSandbox::async_prestart), whose
  // bubblewrap and confine start in their own processes while the Run goes on. A sandbox that
  // failed to start is said only after the checks below, which would refuse the Run anyway.
  Status sandbox_started;
  {
    using namespace asio::experimental::awaitable_operators;
    auto [checked_out, started] = co_await (async_checkout() && async_start_sandbox_early(providers));
    TAKOSUMI_CO_TRY(checked_out);
    sandbox_started = std::move(started);
  }
  // Before tofu installs or starts anything: a denied provider, provisioner or external data
  // source stops the Run here. This scan reads the configuration as the checkout has it, before
  // init adds files: its required_version literals choose the OpenTofu.
  auto scan = co_await async_check_module_policy();
  if (!scan) co_return std::unexpected(scan.error());
  TAKOSUMI_CO_TRY(co_await async_restore_inputs());
  if (!runs_tofu) {
    // A drift check of what was never applied: no real object can differ from a stored state, so
    // no drift, and no tofu to run.
    report_.drift = protocol::DriftReport{"no_drift", {}};
    co_return Status{};
  }
  TAKOSUMI_CO_TRY(check_committed_lock(*workspace_, module_dir_, providers->pins));
  TAKOSUMI_CO_TRY(sandbox_started);
  auto tofu = co_await async_choose_tofu(*scan);
  if (!tofu) co_return std::unexpected(tofu.error());
  // The sandbox started early is the Run's only if it was made for this OpenTofu and module.
  if (tofu_ && (tofu_->binary() != tofu->binary || tofu_->module_dir() != module_dir_)) {
    co_await tofu_->async_close();
    tofu_.reset();
  }
  if (!tofu_) TAKOSUMI_CO_TRY(start_tofu(*tofu, providers->mirror, module_dir_));
  // What the chosen OpenTofu says it is, before a hook runs for a Run it cannot serve.
  TAKOSUMI_CO_TRY(co_await async_tofu_version(tofu->binary));
  TAKOSUMI_CO_TRY(check_tofu_version(*tofu));
  TAKOSUMI_CO_TRY(co_await async_hook(HookPoint::pre));
  TAKOSUMI_CO_TRY(co_await async_init(*providers, *scan, *tofu));
  // Again, now that init has downloaded the modules the configuration calls.
  TAKOSUMI_CO_TRY(co_await async_check_module_policy());
  TAKOSUMI_CO_TRY(check_providers(*providers));
  TAKOSUMI_CO_TRY(prepare_credentials());
  Status done;
  switch (manifest_.type) {
    case protocol::RunType::apply:
      done = co_await async_apply();
      break;
    case protocol::RunType::drift_check:
      done = co_await async_drift_check();
      break;
    case protocol::RunType::plan:
    case protocol::RunType::destroy_plan:
      done = co_await async_plan();
      break;
  }
  TAKOSUMI_CO_TRY(done);
  co_return co_await async_hook(HookPoint::post);
}

void RunFlow::begin_report() {
  report_.source_commit = manifest_.source.commit;
  report_.env_names = TofuCli::environment_names();
  for (const auto& line : redaction::collect_bundle_secrets(inputs_.secrets, secrets_)) notice(line);
}

Status RunFlow::create_workspace() {
  if (cancel_.requested()) return fail(errc::kCancelled, "cancelled before the Run started");
  auto ws = RunWorkspace::create(settings_.work_root, manifest_.run_id, manifest_.attempt);
  if (!ws) return std::unexpected(protocol::as_run_failure(ws.error(), errc::kWorkspaceFailed));
  workspace_.emplace(std::move(*ws));
  return {};
}

Status RunFlow::check_inputs() const {
  if (manifest_.prior_state.has_value() != inputs_.prior_state_envelope.has_value())
    return fail(errc::kStateIntegrityFailed,
                manifest_.prior_state ? "the prior StateVersion " +
                                            manifest_.prior_state->state_version_id +
                                            " was not provided"
                                      : "a prior state was provided but the manifest names none");
  if (manifest_.type == protocol::RunType::apply && (!manifest_.saved_plan || !inputs_.plan_envelope))
    return fail(errc::kPlanDigestMismatch, "an apply needs the approved plan and its envelope");
  return {};
}

asio::awaitable<Status> RunFlow::async_checkout() {
  PhaseTimer timer(report_.phase_millis, "checkout");
  // A cancel ends the fetch at once: the helper is killed (the flag is read on the pool's thread).
  auto cancelled = std::make_shared<std::atomic<bool>>(cancel_.requested());
  cancel_.set_waker([cancelled] { cancelled->store(true); });
  SourceAccess access = settings_.source;
  access.fetch.cancelled = [cancelled] { return cancelled->load(); };
  const auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline_ - Clock::now());
  access.fetch.timeout = std::max(std::chrono::seconds(1), std::min(access.fetch.timeout, left));
  SourceRequest request{manifest_.workspace_id, manifest_.source, std::nullopt, inputs_.source_pack};
  if (inputs_.secrets.source) request.credential = inputs_.secrets.source->clone();
  auto source = co_await async_checkout_source(blocking_, access, std::move(request), workspace_->source());
  cancel_.clear_waker();
  if (!source) co_return std::unexpected(protocol::as_run_failure(source.error(), errc::kWorkspaceFailed));
  module_dir_ = source->module_dir;
  co_return scrub_source();
}

// What the module can reach: its directory's tree and the local modules it calls elsewhere in the
// checkout. After init it includes the modules tofu downloaded into .terraform/modules, which
// the first scan could not see.
asio::awaitable<Result<ModuleScan>> RunFlow::async_check_module_policy() {
  Result<ModuleScan> scan;
  {
    PhaseTimer timer(report_.phase_millis, "policy");
    scan = co_await async_offload(blocking_.get_executor(), [this] {
      return scan_module(workspace_->source(), module_dir_);
    });
  }
  if (!scan) co_return workspace_error(scan.error(), "policy scan");
  TAKOSUMI_CO_TRY(check_module_policy(*scan, policy_));
  co_return scan;
}

// A state, or providers, never come from the source: only from the manifest's StateVersion and
// the mirror.
Status RunFlow::scrub_source() const {
  for (const char* name : {kStateFile, "terraform.tfstate.backup", kErroredStateFile, ".terraform"})
    if (auto removed = remove_tree(module_dir_ / name); !removed)
      return workspace_error(removed.error(), "checkout");
  return {};
}

asio::awaitable<Status> RunFlow::async_restore_inputs() {
  if (!manifest_.prior_state && manifest_.type != protocol::RunType::apply) co_return Status{};
  PhaseTimer timer(report_.phase_millis, "decrypt");
  const SealedInputs sealed{inputs_.prior_state_envelope, &inputs_.prior_state_dek, inputs_.plan_envelope,
                            &inputs_.plan_dek};
  const InputsOpenedAt at{module_dir_ / kStateFile, workspace_->plan_contents(), workspace_->frozen_plan()};
  auto opened = co_await async_offload(blocking_.get_executor(), [&] {
    return open_sealed_inputs(sealed, manifest_, at, settings_.max_state_bytes, secrets_);
  });
  inputs_.prior_state_dek.wipe();
  inputs_.plan_dek.wipe();
  if (!opened) co_return std::unexpected(opened.error());
  plan_secrets_restored_ = *opened;
  co_return Status{};
}

// The Run's TofuCli and its sandbox, started beside the checkout so that bubblewrap's and
// confine's start (about 30 ms) overlaps it (runner/tofu/phase_sandbox.hpp), when nothing the
// sandbox is made of depends on the source: the agent has one OpenTofu (without a
// tofu.versionsDir no required_version chooses another), the module's directory is the
// manifest's, and no pre-hook comes first (a hook ends the phase's sandbox). Nothing of the Run
// runs in it before its first command, which comes after every check it came after before.
asio::awaitable<Status> RunFlow::async_start_sandbox_early(const std::optional<RunProviders>& providers) {
  const bool apply = manifest_.type == protocol::RunType::apply;
  const auto& pre_hook = apply ? settings_.hooks.pre_apply : settings_.hooks.pre_plan;
  if (!providers || !settings_.sandbox || !settings_.tofu_versions_dir.empty() || !pre_hook.empty())
    co_return Status{};
  auto module = safe_module_path(manifest_.source.module_path);
  if (!module) co_return Status{};  // the checkout says what is wrong with it
  PhaseTimer timer(report_.phase_millis, "sandbox");
  TAKOSUMI_CO_TRY(start_tofu(TofuChoice{settings_.tofu_binary, {}, {}, {}}, providers->mirror,
                             (workspace_->source() / *module).lexically_normal()));
  co_return co_await tofu_->async_start_sandbox();
}

// The TofuCli of this Run; no command runs yet.
Status RunFlow::start_tofu(const TofuChoice& tofu, const std::filesystem::path& mirror,
                           const std::filesystem::path& module_dir) {
  const RunTofuParts parts{tofu.binary, mirror, deadline_, policy_, *workspace_,
                           cgroup_ ? &*cgroup_ : nullptr, blocking_, secrets_};
  auto options = run_tofu_options(run_tofu_request(settings_, parts));
  if (!options) return std::unexpected(options.error());
  for (const auto& warning : options->warnings) notice(warning);
  if (!settings_.sandbox) spdlog::warn("run {}: running unsandboxed (sandbox.mode: none)", manifest_.run_id);
  tofu_.emplace(launcher_, cancel_, std::move(options->options), *workspace_, module_dir, log_);
  if (auto written = tofu_->write_cli_config(); !written) return workspace_error(written.error(), "CLI config");
  // Every kind of plan evaluates the configuration; an apply takes its variables from the plan.
  if (manifest_.type != protocol::RunType::apply) tofu_->set_variables(manifest_.variables);
  return {};
}

// The mirror against the operator's pins, before any tofu of this Run starts (runner/policy/
// verified_mirror.hpp run_providers).
asio::awaitable<Result<RunProviders>> RunFlow::async_check_mirror() {
  const auto& s = settings_;
  // Without pins there is nothing to hash: no hop to the blocking pool on every Run.
  if (s.provider_pins.empty()) co_return RunProviders{s.provider_mirror, {}};
  co_return co_await async_offload(blocking_.get_executor(), [&] {
    return run_providers(s.provider_mirror, s.provider_pins, s.verified_mirror_store, s.package_hashes.get());
  });
}

asio::awaitable<Status> RunFlow::async_init(const RunProviders& providers, const ModuleScan& scan,
                                            const TofuChoice& tofu) {
  std::optional<std::string> key;
  const InitCache cache(settings_.init_cache_dir);
  if (!settings_.init_cache_dir.empty()) {
    PhaseTimer timer(report_.phase_millis, "init_cache");
    // After the pre-hook: the files hashed are the files init would read.
    const InitInputs in{module_dir_,
                        scan.files,
                        scan.remote_modules_pending || !scan.complete,
                        tofu.binary,
                        cli_config_text(providers.mirror),
                        providers.mirror,
                        manifest_.type == protocol::RunType::apply ? std::string()
                                                                   : takosumi::serialize(protocol::to_json(manifest_.variables)),
                        takosumi::serialize(protocol::to_json(policy_))};
    auto restored = co_await async_offload(blocking_.get_executor(), [&]() -> Result<bool> {
      key = init_cache_key(*workspace_, in);
      return key ? cache.restore(*key, *workspace_, module_dir_, providers.mirror) : Result<bool>(false);
    });
    if (!restored) co_return workspace_error(restored.error(), "init cache");
    if (*restored) {
      notice("init: the verified result of an identical init is reused (the same configuration, "
             "variables, OpenTofu and mirror)");
      co_return Status{};
    }
  }
  {
    PhaseTimer timer(report_.phase_millis, "init");
    TAKOSUMI_CO_TRY(co_await tofu_->async_init());
  }
  if (!key) co_return Status{};
  auto kept = co_await async_offload(blocking_.get_executor(),
                                     [&] { return cache.store(*key, module_dir_, providers.mirror); });
  if (!kept) spdlog::warn("run {}: init cache: {}", manifest_.run_id, kept.error().to_string());
  co_return Status{};
}

// Asked of the binary once per identity (TofuVersionCache), not once per Run.
asio::awaitable<Status> RunFlow::async_tofu_version(const fs::path& binary) {
  const auto& cache = settings_.tofu_versions;
  const auto identity = TofuVersionCache::identify(binary);
  if (cache && identity) {
    if (auto known = cache->find(binary, *identity)) {
      report_.tofu_version = std::move(*known);
      co_return Status{};
    }
  }
  auto version = co_await tofu_->async_version();
  if (!version) co_return std::unexpected(version.error());
  report_.tofu_version = *version;
  if (cache && identity) cache->remember(binary, *identity, std::move(*version));
  co_return Status{};
}

// The providers init installed, against the mirror and the policy, and the lock file naming them.
Status RunFlow::check_providers(const RunProviders& providers) {
  auto installed = check_installed_lock(*workspace_, module_dir_, providers, settings_.exec_control.has_value(),
                                        policy_);
  if (!installed) return std::unexpected(installed.error());
  locked_providers_ = std::move(installed->providers);
  if (!installed->sha256.empty()) report_.provider_lock_sha256 = std::move(installed->sha256);
  return {};
}

asio::awaitable<Status> RunFlow::async_hook(HookPoint point) {
  co_return co_await async_run_hook(phase_context(), settings_.hooks, point);
}

// The Run's cgroup, when the agent may manage one: its tasks (limits.maxProcesses) and, where the
// memory controller is there too, its memory (limits.memoryMiB) count together.
asio::awaitable<Status> RunFlow::async_make_cgroup() {
  const std::string name = manifest_.run_id + "-" + std::to_string(manifest_.attempt);
  std::vector<std::string> warnings;
  const auto make = [&] {
    return make_run_cgroup(settings_.cgroups, name, settings_.max_processes, settings_.memory_bytes,
                           ::geteuid() == 0, warnings);
  };
  if (!settings_.cgroups) {
    (void)make();  // nothing to create, so nothing to wait for: it only says what is not enforced
    for (const auto& line : warnings) notice(line);
    co_return Status{};
  }
  auto made = co_await async_offload(blocking_.get_executor(), make);
  for (const auto& line : warnings) notice(line);
  if (!made) co_return std::unexpected(protocol::as_run_failure(made.error(), errc::kSandboxFailed));
  if (*made) cgroup_.emplace(std::move(**made));
  co_return Status{};
}

Status RunFlow::prepare_credentials() {
  if (inputs_.secrets.empty()) return {};
  auto creds = RunCredentials::prepare(inputs_.secrets, locked_providers_, workspace_->credentials());
  if (!creds) return std::unexpected(protocol::as_run_failure(creds.error(), errc::kWorkspaceFailed));
  credentials_.emplace(std::move(*creds));
  for (const auto& skipped : credentials_->skipped())
    notice("Connection " + skipped + " not injected: the module does not use that provider");
  for (auto& name : credentials_->names()) report_.env_names.push_back(std::move(name));
  tofu_->set_credentials(&*credentials_);
  return {};
}

PhaseContext RunFlow::phase_context() {
  return PhaseContext{blocking_, manifest_, *tofu_, *workspace_, module_dir_, inputs_.outbox,
                      settings_.max_state_bytes, secrets_, log_, report_.phase_millis};
}

asio::awaitable<Status> RunFlow::async_plan() {
  const PlanMode mode =
      manifest_.type == protocol::RunType::destroy_plan ? PlanMode::destroy : PlanMode::normal;
  auto planned = co_await async_plan_phase(phase_context(), mode, settings_.data_loss_patterns);
  if (!planned) co_return std::unexpected(planned.error());
  PlanReview& review = planned->review;
  // Names only: the control plane refuses to pass these on even before the first apply.
  for (auto& refused : review.refused_outputs) report_.refused_outputs.push_back(std::move(refused));
  report_.data_loss = std::move(review.data_loss);
  report_.resource_changes = std::move(review.analysis.resource_changes);
  report_.summary = review.analysis.summary;
  report_.has_changes = review.has_changes;
  if (planned->sealed) {
    outcome_.plan_envelope = planned->sealed->path;
    report_.plan_digest = planned->sealed->plaintext_sha256;
    report_.plan_artifact_sha256 = planned->sealed->artifact_sha256;
  }
  outcome_.plan_view = planned->view_file;
  report_.plan_view_sha256 = planned->view_sha256;
  co_return Status{};
}

asio::awaitable<Status> RunFlow::async_apply() {
  const ApplyStart start{plan_secrets_restored_, inputs_.before_apply, cancel_, settings_.checkpoint_interval,
                         settings_.work_root};
  AppliedRun applied;
  const Status done = co_await async_apply_phase(phase_context(), start, applied);
  outcome_.checkpoints = applied.checkpoints;
  if (applied.state) {
    outcome_.state_envelope = applied.state->envelope;
    report_.new_state = std::move(applied.state->descriptor);
  }
  for (auto& refused : applied.published.refused) report_.refused_outputs.push_back(std::move(refused));
  if (done) report_.outputs = std::move(applied.published.outputs);
  co_return done;
}

asio::awaitable<Status> RunFlow::async_drift_check() {
  auto drift = co_await async_drift_phase(phase_context());
  if (!drift) co_return std::unexpected(drift.error());
  report_.has_changes = drift->status == "drift";
  report_.drift = std::move(*drift);
  co_return Status{};
}

void RunFlow::finish_report(const Status& outcome) {
  const Status result = name_the_limit(
      outcome, {settings_.memory_bytes, settings_.workspace_bytes, cgroup_ ? cgroup_->oom_kills() : 0});
  if (result) {
    report_.status = "succeeded";
  } else {
    report_.status = "failed";
    report_.failure_code = result.error().code;
    report_.failure_message = protocol::bounded_failure_message(result.error().message);
    report_.outputs.clear();
    if (manifest_.type == protocol::RunType::drift_check)
      report_.drift = protocol::DriftReport{"error", {}};
    notice("run failed: " + result.error().to_string());
  }
  if (credentials_) {
    if (auto wiped = credentials_->wipe(); !wiped)
      spdlog::error("run {}: credentials: {}", manifest_.run_id, wiped.error().to_string());
    credentials_.reset();
  }
}

asio::awaitable<void> RunFlow::async_release() {
  // The phase's sandbox ends before anything it could see is wiped or its cgroup removed.
  if (tofu_) co_await tofu_->async_close();
  if (cgroup_) co_await async_offload(blocking_.get_executor(), [this] { cgroup_.reset(); });
  if (!workspace_) co_return;
  auto wiped = co_await async_offload(blocking_.get_executor(), [this] { return workspace_->wipe(); });
  if (!wiped) spdlog::error("run {}: {}", manifest_.run_id, wiped.error().to_string());
  workspace_.reset();
}

}  // namespace takosumi::runner
