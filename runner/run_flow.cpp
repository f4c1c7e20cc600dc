#include "runner/run_flow.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <array>

#include "common/error_codes.hpp"
#include "protocol/failure_codes.hpp"
#include "common/file_io.hpp"
#include "crypto/sha256.hpp"
#include "common/offload.hpp"
#include "runner/phase_timer.hpp"
#include "runner/plan/data_loss.hpp"
#include "runner/plan/drift_analysis.hpp"
#include "runner/plan/output_filter.hpp"
#include "runner/policy/mirror_verify.hpp"
#include "runner/policy/verified_mirror.hpp"
#include "runner/source/git_source.hpp"
#include "runner/policy/installed_providers.hpp"
#include "runner/policy/module_policy.hpp"
#include "runner/plan/plan_analysis.hpp"
#include "runner/plan/plan_view_build.hpp"
#include "protocol/plan_view_text.hpp"
#include "runner/policy/provider_lock.hpp"
#include "runner/state/run_artifacts.hpp"
#include "redaction/sensitive_values.hpp"
#include "runner/state/state_checkpoint.hpp"
#include "runner/state/state_document.hpp"
#include "runner/state/state_file.hpp"

namespace takosumi::runner {
namespace {

// The mapped outputs a plan's planned_values mark sensitive (their values may still be unknown).
std::vector<std::string> planned_sensitive_outputs(
    const boost::json::object& plan,
    const std::map<std::string, protocol::OutputMapping>& allowlist) {
  const boost::json::value* values = plan.if_contains("planned_values");
  const boost::json::value* outputs =
      values && values->is_object() ? values->get_object().if_contains("outputs") : nullptr;
  if (!outputs || !outputs->is_object()) return {};
  return sensitive_mapped_outputs(outputs->get_object(), allowlist);
}

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Lines of a plan or drift shown in the Run's log; the plan view (GET /api/v1/runs/{id}/plan)
// holds every change.
constexpr std::size_t kMaxPlanLogLines = 5000;

// The OpenTofu outputs the Capsule maps: only their values may be shown.
std::set<std::string> mapped_output_names(const std::map<std::string, protocol::OutputMapping>& allowlist) {
  std::set<std::string> names;
  for (const auto& [public_name, mapping] : allowlist) names.insert(mapping.from);
  return names;
}

// tofu show -json, parsed once: its sensitive values join the Run's secrets and the object goes on
// to the analysis.
Result<boost::json::object> parse_plan_json(std::string_view text, redaction::SecretSet& secrets) {
  auto doc = parse_json_document(text, "tofu show -json");
  if (!doc) return std::unexpected(doc.error());
  if (!doc->is_object()) return fail(errc::kOpentofuFailed, "tofu show -json is not an object");
  redaction::collect_plan_secrets(*doc, secrets);
  return std::move(doc->as_object());
}

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
      provider_mirror_(settings.provider_mirror),
      tofu_binary_(settings.tofu_binary),
      secrets_(*inputs.secret_set),
      policy_(protocol::combine(settings.policy, inputs.manifest.policy)) {}

RunFlow::~RunFlow() {
  if (credentials_) (void)credentials_->wipe();
  if (workspace_) (void)workspace_->wipe();
}

void RunFlow::remember(std::string_view what, std::string_view value) {
  if (value.empty() || secrets_.add(value)) return;
  // Too short to replace everywhere it occurs without destroying the log (docs/security.md).
  notice(std::string(what) + " is shorter than " + std::to_string(redaction::kMinRedactedLength) +
         " bytes: it is not redacted by exact value");
}

void RunFlow::remember_bundle_secrets() {
  for (const auto& c : inputs_.secrets.connections)
    for (const auto& [name, value] : c.values)
      remember("the value of " + name + " (Connection " + c.name + ")", value.reveal_as_string());
  for (const auto& [name, value] : inputs_.secrets.sensitive_variables)
    remember("sensitive variable " + name, value.reveal_as_string());
  if (const auto& source = inputs_.secrets.source) {
    const std::string what = "the source credential (Connection " + source->connection_id + ")";
    remember(what, source->token.reveal_as_string());
    remember(what, source->private_key.reveal_as_string());
  }
}

void RunFlow::notice(std::string_view line) const {
  if (log_) log_("takosumi: " + std::string(line));
}

// Every step of a Run, in order; the first failure ends it.
asio::awaitable<Status> RunFlow::async_execute() {
  begin_report();
  TAKOSUMI_CO_TRY(check_inputs());
  TAKOSUMI_CO_TRY(create_workspace());
  TAKOSUMI_CO_TRY(co_await async_checkout());
  // Before tofu installs or starts anything: a denied provider, provisioner or external data
  // source stops the Run here.
  TAKOSUMI_CO_TRY(co_await async_check_module_policy());
  TAKOSUMI_CO_TRY(co_await async_restore_inputs());
  if (manifest_.type == protocol::RunType::drift_check && !manifest_.prior_state) {
    // Nothing was ever applied, so no real object can differ from a stored state: no drift,
    // and no tofu to run.
    report_.drift = protocol::DriftReport{"no_drift", {}};
    co_return Status{};
  }
  // Before anything of the Run executes (a hook, tofu): the mirror against the operator's pins,
  // and the lock file the module brings, if any, against them too.
  TAKOSUMI_CO_TRY(co_await async_check_mirror());
  TAKOSUMI_CO_TRY(check_committed_lock());
  TAKOSUMI_CO_TRY(co_await async_choose_tofu());
  TAKOSUMI_CO_TRY(co_await async_make_cgroup());
  TAKOSUMI_CO_TRY(start_tofu());
  // What the chosen OpenTofu says it is, before a hook runs for a Run it cannot serve.
  TAKOSUMI_CO_TRY(co_await async_tofu_version());
  TAKOSUMI_CO_TRY(check_tofu_version());
  TAKOSUMI_CO_TRY(co_await async_hook(HookPoint::pre));
  TAKOSUMI_CO_TRY(co_await async_init());
  // Again, now that init has downloaded the modules the configuration calls.
  TAKOSUMI_CO_TRY(co_await async_check_module_policy());
  TAKOSUMI_CO_TRY(check_providers());
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
  remember_bundle_secrets();
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
asio::awaitable<Status> RunFlow::async_check_module_policy() {
  Result<ModuleScan> scan;
  {
    PhaseTimer timer(report_.phase_millis, "policy");
    scan = co_await async_offload(blocking_.get_executor(), [this] {
      return scan_module(workspace_->source(), module_dir_);
    });
  }
  if (!scan) co_return workspace_error(scan.error(), "policy scan");
  // The scan before init reads the configuration as the checkout has it, before init adds files.
  if (!root_required_versions_) {
    root_required_versions_ = scan->required_versions;
    required_versions_cut_ = scan->required_versions_cut;
  }
  co_return check_module_policy(*scan, policy_);
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
  if (manifest_.prior_state) TAKOSUMI_CO_TRY(co_await async_restore_prior_state());
  if (manifest_.type == protocol::RunType::apply) {
    auto restored = co_await async_offload(blocking_.get_executor(), [this] {
      return restore_saved_plan(*inputs_.plan_envelope, inputs_.plan_dek, manifest_,
                                workspace_->plan_contents(), workspace_->frozen_plan());
    });
    if (!restored) co_return std::unexpected(restored.error());
    // The plan's sensitive values are secrets before tofu prints a line, init included.
    if (*restored) {
      for (const auto& value : **restored) secrets_.add(value.reveal_as_string());
      plan_secrets_restored_ = true;
    }
  }
  inputs_.prior_state_dek.wipe();
  inputs_.plan_dek.wipe();
  co_return Status{};
}

asio::awaitable<Status> RunFlow::async_restore_prior_state() {
  auto restored = co_await async_offload(blocking_.get_executor(), [this] {
    return restore_prior_state(*inputs_.prior_state_envelope, inputs_.prior_state_dek, manifest_,
                               module_dir_ / kStateFile);
  });
  if (!restored) co_return restored;
  // The prior state's sensitive values may show up in this Run's output (an error message
  // quoting an attribute): they are redacted like the Run's own secrets.
  auto collected = co_await async_offload(blocking_.get_executor(), [this] {
    return read_state_document(module_dir_ / kStateFile, "the prior state",
                               state_read_limit(settings_.max_state_bytes), secrets_);
  });
  if (!collected)
    co_return std::unexpected(protocol::as_run_failure(collected.error(), errc::kStateIntegrityFailed));
  co_return Status{};
}

// The TofuCli of this Run; no command runs yet.
Status RunFlow::start_tofu() {
  auto options = tofu_options();
  if (!options) return std::unexpected(options.error());
  tofu_.emplace(launcher_, cancel_, std::move(*options), *workspace_, module_dir_, log_);
  if (auto written = tofu_->write_cli_config(); !written) return workspace_error(written.error(), "CLI config");
  // Every kind of plan evaluates the configuration; an apply takes its variables from the plan.
  if (manifest_.type != protocol::RunType::apply) tofu_->set_variables(manifest_.variables);
  return {};
}

// The mirror against the operator's pins, before any tofu of this Run starts: a package altered
// on disk never runs. Hashes are cached by the packages' identity (PackageHashCache).
asio::awaitable<Status> RunFlow::async_check_mirror() {
  if (settings_.provider_pins.empty()) co_return Status{};
  co_return co_await async_offload(blocking_.get_executor(), [this]() -> Status {
    auto pins = read_provider_pins(settings_.provider_pins);
    if (!pins)
      return fail(errc::kProviderChecksumMismatch, "tofu.providerPins: " + pins.error().message);
    pins_ = *pins;
    if (settings_.verified_mirror_store.empty()) {
      auto checked =
          verify_mirror(settings_.provider_mirror, *pins, settings_.package_hashes.get());
      if (!checked) return std::unexpected(checked.error());
      return {};
    }
    // From here the Run's providers come from the agent's verified copy, not the mirror itself.
    auto copy = verified_mirror(settings_.provider_mirror, *pins, settings_.verified_mirror_store,
                                settings_.package_hashes.get());
    if (!copy) return std::unexpected(copy.error());
    provider_mirror_ = *copy;
    return {};
  });
}

asio::awaitable<Status> RunFlow::async_init() {
  PhaseTimer timer(report_.phase_millis, "init");
  co_return co_await tofu_->async_init();
}

// Asked of the binary once per identity (TofuVersionCache), not once per Run.
asio::awaitable<Status> RunFlow::async_tofu_version() {
  const auto& cache = settings_.tofu_versions;
  const auto identity = TofuVersionCache::identify(tofu_binary_);
  if (cache && identity) {
    if (auto known = cache->find(tofu_binary_, *identity)) {
      report_.tofu_version = std::move(*known);
      co_return Status{};
    }
  }
  auto version = co_await tofu_->async_version();
  if (!version) co_return std::unexpected(version.error());
  report_.tofu_version = *version;
  if (cache && identity) cache->remember(tofu_binary_, *identity, std::move(*version));
  co_return Status{};
}

// The providers init installed, against the mirror and the policy, and the lock file naming them.
Status RunFlow::check_providers() {
  if (settings_.exec_control)
    TAKOSUMI_TRY(check_installed_providers(module_dir_, provider_mirror_));
  // The lock file lies in the writable module directory: it is read only as a regular file of
  // this workspace (never a FIFO that would block the agent, nor a link to another Run's files).
  const fs::path lock = module_dir_ / ".terraform.lock.hcl";
  const bool have_lock = fs::exists(fs::symlink_status(lock));
  if (have_lock)
    if (auto ok = workspace_->check_regular_file(lock); !ok) return workspace_error(ok.error(), "provider lock");
  auto locked = read_locked_providers(lock);
  if (!locked) return workspace_error(locked.error(), "provider lock");
  TAKOSUMI_TRY(check_locked_providers(*locked, policy_));
  locked_providers_ = std::move(*locked);
  if (!have_lock) return {};
  TAKOSUMI_TRY(check_lock_against_pins(lock));
  auto digest = crypto::sha256_file_hex(lock);
  if (!digest) return workspace_error(digest.error(), "provider lock");
  report_.provider_lock_sha256 = *digest;
  return {};
}

// A dependency lock file the module committed, against the pins before init reads it: a version
// or hash the operator did not pin fails here as provider_checksum_mismatch, not later inside
// init. Read as a regular file of the checkout only.
Status RunFlow::check_committed_lock() const {
  if (pins_.empty()) return {};
  const fs::path lock = module_dir_ / ".terraform.lock.hcl";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(lock, ec))) return {};
  if (auto ok = workspace_->check_regular_file(lock); !ok)
    return workspace_error(ok.error(), "provider lock");
  return check_lock_against_pins(lock);
}

// With pins, the lock file init left (written by the module's author or by init) must select
// only pinned versions, each with a hash its pin lists: the Run's providers are then exactly the
// operator's, whatever the module committed.
Status RunFlow::check_lock_against_pins(const fs::path& lock) const {
  if (pins_.empty()) return {};
  auto text = read_file(lock, 4 * 1024 * 1024);
  if (!text) return workspace_error(text.error(), "provider lock");
  auto selected = parse_provider_pins(*text);
  if (!selected)
    return fail(errc::kProviderChecksumMismatch,
                "the module's dependency lock file does not read as one: " + selected.error().message);
  for (const auto& entry : *selected) {
    const std::string what = shown_name(entry.address + " " + entry.version);
    const ProviderPin* pin = find_pin(pins_, entry.address, entry.version);
    if (pin == nullptr)
      return fail(errc::kProviderChecksumMismatch,
                  "the module's lock file selects " + what + ", which tofu.providerPins does not pin");
    const bool listed = std::any_of(entry.hashes.begin(), entry.hashes.end(), [&](const auto& h) {
      return std::find(pin->hashes.begin(), pin->hashes.end(), h) != pin->hashes.end();
    });
    if (!listed)
      return fail(errc::kProviderChecksumMismatch,
                  "the module's lock file lists no hash of " + what + " that its pin lists");
  }
  return {};
}

// The plan file lies in the writable workspace: it is copied out the moment tofu has exited
// (nothing of the Run is running then: the sandbox's pid namespace is gone) into the agent's
// directory, which the sandbox sees read-only.
asio::awaitable<Status> RunFlow::async_freeze(const fs::path& written, const fs::path& frozen) {
  PhaseTimer timer(report_.phase_millis, "freeze");
  auto copied = co_await async_offload(blocking_.get_executor(), [&] {
    return workspace_->freeze(written, frozen, settings_.max_state_bytes);
  });
  if (!copied) co_return workspace_error(copied.error(), "saved plan");
  co_return Status{};
}

// The Run's cgroup, when the agent may manage one: its tasks (limits.maxProcesses) and, where the
// memory controller is there too, its memory (limits.memoryMiB) count together.
asio::awaitable<Status> RunFlow::async_make_cgroup() {
  const bool cgroup_memory = settings_.cgroups && settings_.cgroups->limits_memory() && settings_.memory_bytes > 0;
  if (settings_.max_processes == 0 && !cgroup_memory) co_return Status{};
  if (!settings_.cgroups) {
    // RLIMIT_NPROC (set by takosumi-confine) does not bind root: the kernel exempts it.
    if (::geteuid() == 0)
      notice("warning: limits.maxProcesses is not enforced: the agent runs as root and has no "
             "writable pids cgroup (delegate one, e.g. systemd Delegate=pids, or run as an "
             "unprivileged user)");
    co_return Status{};
  }
  const std::string name = manifest_.run_id + "-" + std::to_string(manifest_.attempt);
  RunCgroupLimits limits{settings_.max_processes, std::nullopt};
  if (cgroup_memory) limits.memory_bytes = settings_.memory_bytes;
  auto created = co_await async_offload(blocking_.get_executor(), [&]() -> Status {
    auto cgroup = settings_.cgroups->create(name, limits);
    if (!cgroup) return std::unexpected(cgroup.error());
    cgroup_.emplace(std::move(*cgroup));
    return {};
  });
  if (!created) co_return std::unexpected(protocol::as_run_failure(created.error(), errc::kSandboxFailed));
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

// `tofu show -json` of a plan file, parsed: its sensitive values join the Run's secrets.
asio::awaitable<Result<boost::json::object>> RunFlow::async_show(const fs::path& plan_file) {
  auto shown = co_await tofu_->async_show_json(plan_file);
  if (!shown) co_return std::unexpected(shown.error());
  co_return co_await async_offload(blocking_.get_executor(),
                                   [&] { return parse_plan_json(*shown, secrets_); });
}

asio::awaitable<Result<bool>> RunFlow::async_tofu_plan(const fs::path& plan_file, PlanMode mode) {
  PhaseTimer timer(report_.phase_millis, "plan");
  co_return co_await tofu_->async_plan(plan_file, mode);
}

asio::awaitable<Status> RunFlow::async_plan() {
  const PlanMode mode =
      manifest_.type == protocol::RunType::destroy_plan ? PlanMode::destroy : PlanMode::normal;
  auto changed = co_await async_tofu_plan(workspace_->plan_file(), mode);
  if (!changed) co_return std::unexpected(changed.error());
  // From here on only the frozen copy is read: what is shown is what is sealed and applied.
  TAKOSUMI_CO_TRY(co_await async_freeze(workspace_->plan_file(), workspace_->frozen_plan()));
  Result<PlanAnalysis> analysis;
  std::vector<std::string> sensitive;
  protocol::PlanView view;  // what the reviewer reads: the frozen plan, redacted
  {
    PhaseTimer timer(report_.phase_millis, "show");
    auto doc = co_await async_show(workspace_->frozen_plan());
    if (!doc) co_return std::unexpected(doc.error());
    analysis = co_await async_offload(blocking_.get_executor(), [&] {
      sensitive = planned_sensitive_outputs(*doc, manifest_.output_allowlist);
      view = build_plan_view(*doc, mapped_output_names(manifest_.output_allowlist), &secrets_);
      auto analysed = analyze_plan(*doc);
      // Only a plan with changes is sealed, and only a sealed plan carries its values.
      if (analysed && (analysed->has_changes || *changed))
        plan_secret_values_ = redaction::plan_secret_values(*doc);
      return analysed;
    });
  }
  if (!analysis) co_return std::unexpected(analysis.error());
  // Names only: the control plane refuses to pass these on even before the first apply.
  for (auto& name : sensitive)
    report_.refused_outputs.push_back(
        protocol::RefusedOutput{std::move(name), std::string(protocol::kSensitiveOutputReason)});
  report_.data_loss = mark_data_loss(analysis->resource_changes, settings_.data_loss_patterns,
                                     analysis->action_reasons);
  report_.resource_changes = std::move(analysis->resource_changes);
  report_.summary = analysis->summary;
  report_.has_changes = analysis->has_changes || *changed;
  if (report_.has_changes) TAKOSUMI_CO_TRY(co_await async_seal_plan());
  view.run_id = manifest_.run_id;
  view.plan_digest = report_.plan_digest;
  view.summary = report_.summary;
  TAKOSUMI_CO_TRY(co_await async_keep_plan_view(view));
  log_sealed_plan(view);
  co_return Status{};
}

// The plan view, for GET /api/v1/runs/{id}/plan: a file of the outbox, uploaded with the sealed
// plan. Its digest travels in the report.
asio::awaitable<Status> RunFlow::async_keep_plan_view(const protocol::PlanView& view) {
  const auto file = inputs_.outbox / "plan_view.json";
  auto kept = co_await async_offload(blocking_.get_executor(), [&]() -> Result<std::string> {
    const std::string body = boost::json::serialize(protocol::to_json(view));
    TAKOSUMI_TRY(write_file_atomic(file, body));
    return crypto::sha256_hex(body);
  });
  if (!kept) co_return std::unexpected(kept.error().with_context("plan view"));
  outcome_.plan_view = file;
  report_.plan_view_sha256 = *kept;
  co_return Status{};
}

// The sealed plan's own text, after everything tofu printed: the plan an apply of this Run runs.
void RunFlow::log_sealed_plan(const protocol::PlanView& view) const {
  if (!log_) return;
  if (!report_.has_changes) {
    notice("the plan as sealed: no changes; nothing to apply");
    return;
  }
  notice("the plan as sealed (plan digest sha256:" + report_.plan_digest +
         "), which an apply of this Run runs:");
  log_("");
  for (const auto& line : protocol::plan_view_lines(view, {.max_lines = kMaxPlanLogLines}))
    log_(line);
  // Only the agent writes a line starting "takosumi" (runner/tofu/process_voice.hpp): what lies
  // between these two is the frozen plan, and nothing else.
  notice("end of the plan as sealed");
}

asio::awaitable<Status> RunFlow::async_seal_plan() {
  PhaseTimer timer(report_.phase_millis, "encrypt");
  auto sealed = co_await async_offload(blocking_.get_executor(), [this] {
    return seal_plan(workspace_->frozen_plan(), plan_secret_values_, workspace_->plan_contents(),
                     inputs_.outbox, manifest_);
  });
  if (!sealed) co_return std::unexpected(sealed.error());
  outcome_.plan_envelope = sealed->path;
  report_.plan_digest = sealed->plaintext_sha256;
  report_.plan_artifact_sha256 = sealed->artifact_sha256;
  co_return Status{};
}

asio::awaitable<Status> RunFlow::async_apply() {
  if (!plan_secrets_restored_) {
    // The plan names the sensitive values this apply will handle (attributes, outputs, variable
    // values): they must be known before tofu prints a line. A plan sealed by an agent before
    // plan contents did not bring them along (async_restore_inputs): ask tofu.
    PhaseTimer timer(report_.phase_millis, "show");
    TAKOSUMI_CO_TRY(co_await async_show(workspace_->frozen_plan()));
  }
  if (inputs_.before_apply) TAKOSUMI_CO_TRY(co_await inputs_.before_apply());
  if (cancel_.requested()) co_return fail(errc::kCancelled, "cancelled before the apply started");
  Status applied = co_await async_tofu_apply();
  // Whatever the apply did to the state is kept, even when it failed or was cancelled.
  auto sealed = co_await async_seal_new_state();
  if (!sealed && !outcome_.state_envelope) co_await async_keep_newest_state(sealed.error());
  if (!applied) {
    if (!sealed) co_return std::unexpected(applied.error().with_context(
                     "and the state could not be sealed (" + sealed.error().to_string() + ")"));
    co_return applied;
  }
  if (!sealed) co_return sealed;
  if (new_state_empty_) {
    // A destroyed Capsule has no Outputs, so a required mapping cannot hold; none are published.
    notice("the new state is empty: no Outputs are published");
    co_return Status{};
  }
  co_return co_await async_publish_outputs();
}

// Read-only: the refresh-only plan is read and dropped. Nothing is sealed (no plan, no state)
// and no Output is touched, whatever the plan says.
asio::awaitable<Status> RunFlow::async_drift_check() {
  auto planned = co_await async_tofu_plan(workspace_->drift_plan_file(), PlanMode::refresh_only);
  if (!planned) co_return std::unexpected(planned.error());
  const auto frozen = workspace_->agent_dir() / "drift.tfplan";
  TAKOSUMI_CO_TRY(co_await async_freeze(workspace_->drift_plan_file(), frozen));
  Result<protocol::DriftReport> drift;
  std::vector<std::string> drift_text;  // redacted
  {
    PhaseTimer timer(report_.phase_millis, "show");
    auto doc = co_await async_show(frozen);
    if (!doc) co_return std::unexpected(doc.error());
    // Exit code 2 also comes from output changes alone: only resource_drift decides.
    drift = co_await async_offload(blocking_.get_executor(), [&] {
      drift_text = protocol::plan_view_lines(build_drift_view(*doc, &secrets_),
                                             {.max_lines = kMaxPlanLogLines, .drift = true});
      return analyze_drift(*doc);
    });
  }
  if (!drift) co_return std::unexpected(drift.error());
  report_.has_changes = drift->status == "drift";
  for (const auto& r : drift->resources)
    notice(protocol::one_line("drift: " + r.address + " (" + r.action + ")"));
  if (log_ && !drift_text.empty()) {
    notice("what changed outside OpenTofu, from the refresh-only plan:");
    for (const auto& line : drift_text) log_(line);
    notice("end of what changed outside OpenTofu");
  }
  report_.drift = std::move(*drift);
  co_return Status{};
}

// A Run that ended past one of its limits says which, whatever the command's own failure was.
Status RunFlow::named_limit(const Status& result) const {
  if (result || result.error().code == errc::kLimitExceeded) return result;
  if (cgroup_ && cgroup_->oom_kills() > 0)
    return fail(errc::kLimitExceeded,
                "the Run went past its memory limit (limits.memoryMiB: " +
                    std::to_string(settings_.memory_bytes >> 20) +
                    " MiB for all of its processes together) and the kernel stopped it: " +
                    result.error().message);
  const std::string& m = result.error().message;
  const bool address_space = settings_.memory_bytes > 0 &&
                             (m.find("out of memory") != std::string::npos ||
                              m.find("Cannot allocate memory") != std::string::npos ||
                              m.find("MemoryError") != std::string::npos);
  if (address_space)
    return fail(errc::kLimitExceeded, "a process of the Run went past its memory limit "
                                      "(limits.memoryMiB: " + std::to_string(settings_.memory_bytes >> 20) +
                                      " MiB of address space each): " + m);
  if (settings_.workspace_bytes > 0 && m.find("File size limit exceeded") != std::string::npos)
    return fail(errc::kLimitExceeded, "a file of the Run went past its workspace limit "
                                      "(limits.workspaceMiB: " + std::to_string(settings_.workspace_bytes >> 20) +
                                      " MiB): " + m);
  return result;
}

asio::awaitable<void> RunFlow::async_finish(const Status& outcome) {
  const Status result = named_limit(outcome);
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
  if (cgroup_) co_await async_offload(blocking_.get_executor(), [this] { cgroup_.reset(); });
  if (!workspace_) co_return;
  auto wiped = co_await async_offload(blocking_.get_executor(), [this] { return workspace_->wipe(); });
  if (!wiped) spdlog::error("run {}: {}", manifest_.run_id, wiped.error().to_string());
  workspace_.reset();
}

}  // namespace takosumi::runner
