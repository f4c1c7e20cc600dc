// RunFlow, part: the options of this Run's tofu commands — the sandbox, what it may read, and the
// kernel exec allowlist. See run_flow.cpp for the steps in order.
#include <spdlog/spdlog.h>

#include "common/error_codes.hpp"
#include "common/offload.hpp"
#include "confine/elf_interpreter.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/policy/mirror_view.hpp"
#include "runner/run_flow.hpp"

namespace takosumi::runner {

namespace fs = std::filesystem;
namespace asio = boost::asio;

// The Capsule's opentofuVersion and the working directory's required_version literals.
Result<std::vector<VersionRequirement>> RunFlow::version_requirements() const {
  std::vector<VersionRequirement> out;
  if (!manifest_.opentofu_version.empty()) {
    auto c = protocol::parse_version_constraint(manifest_.opentofu_version);
    if (!c) return std::unexpected(c.error());  // the manifest's parser refused these already
    out.push_back({"the Capsule's opentofuVersion", std::move(*c)});
  }
  for (const auto& r : root_required_versions_.value_or(std::vector<ModuleScan::RequiredVersion>{})) {
    auto c = protocol::parse_version_constraint(r.constraint);
    if (!c)
      return fail(errc::kOpentofuVersionUnavailable,
                  r.where + ": required_version: " + c.error().message);
    out.push_back({r.where + ": required_version", std::move(*c)});
  }
  return out;
}

// Which OpenTofu the Run uses: tofu.binary, unless the Run has version constraints and the agent
// a tofu.versionsDir; then the newest build there whose name satisfies them all. An apply uses
// the build its plan ran, whatever the constraints say now: OpenTofu applies a saved plan only
// with the version that made it. Chosen before any tofu or hook of the Run starts: the sandbox
// and the exec allowlist admit only that build.
asio::awaitable<Status> RunFlow::async_choose_tofu() {
  const protocol::SavedPlanRef* plan =
      manifest_.type == protocol::RunType::apply && manifest_.saved_plan ? &*manifest_.saved_plan
                                                                          : nullptr;
  if (!plan) {
    auto requirements = version_requirements();
    if (!requirements) co_return std::unexpected(requirements.error());
    version_requirements_ = std::move(*requirements);
  }
  if (plan ? plan->tofu_build.empty() : version_requirements_.empty()) co_return Status{};
  if (settings_.tofu_versions_dir.empty()) {
    if (!plan) co_return Status{};  // tofu.binary, checked against them once it says its version
    co_return fail(errc::kOpentofuVersionUnavailable,
                   "the plan was made with the tofu.versionsDir build " + plan->tofu_build +
                       ", and this agent has no tofu.versionsDir");
  }
  auto chosen = co_await async_offload(blocking_.get_executor(), [this, plan]() -> Result<TofuBuild> {
    auto list = list_tofu_builds(settings_.tofu_versions_dir);
    if (!list) return std::unexpected(list.error());
    return plan ? find_tofu_build(*list, plan->tofu_build)
                : select_tofu_build(*list, version_requirements_);
  });
  if (!chosen)
    co_return std::unexpected(protocol::as_run_failure(chosen.error(), errc::kOpentofuVersionUnavailable));
  if (settings_.sandbox && settings_.exec_control) {
    // As for tofu.binary at the agent's start: the exec allowlist never grants tofu the loader.
    auto interpreter = confine::elf_interpreter(chosen->binary.string());
    if (!interpreter || *interpreter)
      co_return fail(errc::kOpentofuVersionUnavailable,
                     "the tofu.versionsDir build " + chosen->name +
                         (interpreter ? " is dynamically linked; use a statically linked build "
                                        "(CGO_ENABLED=0, as OpenTofu's releases are)"
                                      : ": " + interpreter.error()));
  }
  tofu_binary_ = chosen->binary;
  report_.tofu_build = chosen->name;
  notice("OpenTofu " + chosen->name + " of tofu.versionsDir, " +
         (plan ? std::string("as for the plan") : "for " + describe(version_requirements_)));
  co_return Status{};
}

// What the chosen OpenTofu says it is must satisfy the constraints too, as OpenTofu checks a
// required_version: its release without a prerelease suffix. An apply's must be the plan's.
// A directory named for another version is the operator's mistake, said in the Run's log.
Status RunFlow::check_tofu_version() const {
  const std::string which =
      report_.tofu_build.empty() ? "tofu.binary" : "the tofu.versionsDir build " + report_.tofu_build;
  if (manifest_.type == protocol::RunType::apply && manifest_.saved_plan) {
    const std::string& made_by = manifest_.saved_plan->tofu_version;
    if (!made_by.empty() && made_by != report_.tofu_version)
      return fail(errc::kOpentofuVersionUnavailable,
                  "the plan was made with OpenTofu " + made_by + ", and " + which + " is " +
                      report_.tofu_version +
                      "; a saved plan applies only with the OpenTofu that made it: plan again");
  }
  auto version = protocol::parse_tofu_version(report_.tofu_version);
  if (!version) {
    if (version_requirements_.empty()) return {};
    return fail(errc::kOpentofuVersionUnavailable,
                which + " reports a version that cannot be compared: " + version.error().message);
  }
  version->prerelease.clear();
  for (const auto& r : version_requirements_)
    if (!protocol::satisfies(*version, r.constraint))
      return fail(errc::kOpentofuVersionUnavailable,
                  which + " is OpenTofu " + report_.tofu_version + ", which does not satisfy " +
                      r.where + " \"" + r.constraint.text + "\"" +
                      (settings_.tofu_versions_dir.empty()
                           ? "; this agent has no tofu.versionsDir to choose another build from"
                           : ""));
  if (!report_.tofu_build.empty() && report_.tofu_build != report_.tofu_version)
    notice("warning: the tofu.versionsDir build " + report_.tofu_build + " says it is OpenTofu " +
           report_.tofu_version + "; name its directory after the version it is");
  return {};
}

Result<TofuOptions> RunFlow::tofu_options() const {
  TofuOptions options{tofu_binary_, provider_mirror_, deadline_,
                      settings_.kill_grace};
  options.limits = settings_.limits;
  options.max_show_json = settings_.max_plan_json_bytes;
  options.secrets = &secrets_;
  options.supervisor = settings_.supervisor;
  options.lock_file = workspace_->lock_file();
  if (cgroup_) options.cgroup_procs = cgroup_->procs_file();
  const bool offline = policy_.network == protocol::NetworkMode::none;
  if (!settings_.sandbox) {
    if (offline)
      return fail(errc::kSandboxFailed,
                  "the Run asks for network: none, which only the sandbox can enforce, and "
                  "sandbox.mode is none");
    notice("warning: sandbox.mode is none: tofu and its providers run with the agent's own "
           "rights and can read its keys, tokens and other Runs' workspaces");
    spdlog::warn("run {}: running unsandboxed (sandbox.mode: none)", manifest_.run_id);
    return options;
  }
  options.sandbox = *settings_.sandbox;
  options.sandbox->network = options.sandbox->network && !offline;
  options.sandbox->read_only.push_back(tofu_binary_);
  // Only the providers the policy allows exist in the sandbox: a program that starts another tofu
  // (an allowed provider's exec setting, or external data where allowed) cannot reach the others.
  auto providers = visible_provider_dirs(provider_mirror_, policy_);
  if (!providers) return std::unexpected(providers.error());
  for (const auto& dir : *providers) options.sandbox->read_only.push_back(dir);
  // The supervisor's lock tells a restarted agent whether tofu still runs: the module must not be
  // able to remove or replace it. The agent directory holds what tofu reads but must not change.
  options.sandbox->protected_paths = {workspace_->root() / "capture", workspace_->credentials(),
                                      workspace_->lock_file(), workspace_->agent_dir()};
  auto confine = confine_options(options.sandbox->network, *providers);
  if (!confine) return std::unexpected(confine.error());
  options.hook_confine = hook_confine(*confine);
  options.sandbox->confine = std::move(*confine);
  return options;
}

// The exec allowlist of this Run: tofu and the providers the Run may see; the interpreters of
// sandbox.execAllow (and the dynamic loader they need) only when the policy lets the module run
// programs at all. See docs/security.md "Exec allowlist".
Result<std::optional<SandboxOptions::Confine>> RunFlow::confine_options(
    bool network, const std::vector<fs::path>& providers) const {
  if (!settings_.exec_control) return std::optional<SandboxOptions::Confine>{};
  const ExecControl& control = *settings_.exec_control;
  if (control.landlock.abi == 0) {
    if (control.required)
      return fail(errc::kSandboxFailed,
                  "sandbox.execControl is required, but " + control.landlock.unavailable +
                      "; run the agent on such a kernel or set sandbox.execControl: best-effort");
    notice("warning: the exec allowlist is not enforced (sandbox.execControl: best-effort): " +
           control.landlock.unavailable);
  }
  confine::ConfineArguments args;
  args.exec = {tofu_binary_.string()};
  for (const auto& dir : providers) args.exec.push_back(dir.string());
  if (policy_.allow_provisioners || policy_.allow_external_data) {
    for (const auto& path : control.allow) args.exec.push_back(path.string());
    args.loader = !control.allow.empty();
  }
  if (network) args.tcp_connect_ports = control.tcp_connect_ports;
  if (!settings_.pids_cgroups) args.max_processes = settings_.max_processes;
  args.landlock_required = control.required;
  return std::optional<SandboxOptions::Confine>(SandboxOptions::Confine{control.confine, std::move(args)});
}

}  // namespace takosumi::runner
