// RunFlow, part: which OpenTofu the Run uses (tofu.binary or a build of tofu.versionsDir) and
// the check of what it says it is. See run_flow.cpp for the steps in order.
#include "common/error_codes.hpp"
#include "common/offload.hpp"
#include "confine/elf_interpreter.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/policy/package_hash.hpp"
#include "runner/run_flow.hpp"

namespace takosumi::runner {

namespace asio = boost::asio;

// The Capsule's opentofuVersion and the working directory's required_version literals. Without a
// tofu.versionsDir nothing is chosen from them: a module's constraint this agent cannot read is
// then left to OpenTofu's own check at init, as before there were builds to choose from.
Result<std::vector<VersionRequirement>> RunFlow::version_requirements() const {
  std::vector<VersionRequirement> out;
  if (!manifest_.opentofu_version.empty()) {
    auto c = protocol::parse_version_constraint(manifest_.opentofu_version);
    if (!c) return std::unexpected(c.error());  // the manifest's parser refused these already
    out.push_back({"the Capsule's opentofuVersion", std::move(*c)});
  }
  const bool choosing = !settings_.tofu_versions_dir.empty();
  if (required_versions_cut_) {
    if (!choosing) return out;  // OpenTofu's own check at init reads them all
    return fail(errc::kOpentofuVersionUnavailable,
                "the module sets more than " + std::to_string(ModuleScan::kMaxRequiredVersions) +
                    " different required_version constraints; merge them into one");
  }
  for (const auto& r : root_required_versions_.value_or(std::vector<ModuleScan::RequiredVersion>{})) {
    const std::string where = shown_name(r.where) + ": required_version";
    auto c = protocol::parse_version_constraint(r.constraint);
    if (!c && choosing)
      return fail(errc::kOpentofuVersionUnavailable, where + ": " + c.error().message);
    if (c) out.push_back({where, std::move(*c)});
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
  // As for tofu.binary at the agent's start: where the exec allowlist is enforced, it never
  // grants tofu the dynamic loader.
  const ExecControl* control = settings_.sandbox && settings_.exec_control ? &*settings_.exec_control : nullptr;
  if (control && (control->landlock.abi != 0 || control->required)) {
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
// required_version (by its release). An apply's must be the plan's. A directory named for
// another version is the operator's mistake, said in the Run's log.
Status RunFlow::check_tofu_version() const {
  const std::string which =
      report_.tofu_build.empty() ? "tofu.binary" : "the tofu.versionsDir build " + report_.tofu_build;
  if (manifest_.type == protocol::RunType::apply && manifest_.saved_plan) {
    const std::string& made_by = manifest_.saved_plan->tofu_version;
    if (!made_by.empty() && made_by != report_.tofu_version)
      return fail(errc::kOpentofuVersionUnavailable,
                  "the plan was made with OpenTofu " + shown_name(made_by) + ", and " + which +
                      " is " + shown_name(report_.tofu_version) +
                      "; a saved plan applies only with the OpenTofu that made it: plan again");
  }
  auto version = protocol::parse_tofu_version(report_.tofu_version);
  if (!version) {
    if (version_requirements_.empty()) return {};
    return fail(errc::kOpentofuVersionUnavailable,
                which + " reports a version that cannot be compared: " + version.error().message);
  }
  for (const auto& r : version_requirements_)
    if (!protocol::satisfies(*version, r.constraint))
      return fail(errc::kOpentofuVersionUnavailable,
                  which + " is OpenTofu " + shown_name(report_.tofu_version) +
                      ", which does not satisfy " + r.where + " \"" +
                      shown_name(r.constraint.text) + "\"" +
                      (settings_.tofu_versions_dir.empty()
                           ? "; this agent has no tofu.versionsDir to choose another build from"
                           : ""));
  if (auto named = protocol::parse_tofu_version(report_.tofu_build);
      named && protocol::compare(*named, *version) != 0)
    notice("warning: the tofu.versionsDir build " + report_.tofu_build + " says it is OpenTofu " +
           report_.tofu_version + "; name its directory after the version it is");
  return {};
}

}  // namespace takosumi::runner
