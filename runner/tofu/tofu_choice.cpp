#include "runner/tofu/tofu_choice.hpp"

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "confine/elf_interpreter.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/policy/package_hash.hpp"

namespace takosumi::runner {

Result<std::vector<VersionRequirement>> version_requirements(const protocol::JobManifest& manifest,
                                                             const TofuChoiceInputs& inputs) {
  std::vector<VersionRequirement> out;
  if (!manifest.opentofu_version.empty()) {
    auto c = protocol::parse_version_constraint(manifest.opentofu_version);
    if (!c) return std::unexpected(c.error());  // the manifest's parser refused these already
    out.push_back({"the Capsule's opentofuVersion", std::move(*c)});
  }
  const bool choosing = !inputs.versions_dir.empty();
  if (inputs.required_versions_cut) {
    if (!choosing) return out;  // OpenTofu's own check at init reads them all
    return fail(errc::kOpentofuVersionUnavailable,
                "the module sets more than " + std::to_string(ModuleScan::kMaxRequiredVersions) +
                    " different required_version constraints; merge them into one");
  }
  for (const auto& r : inputs.required_versions) {
    const std::string where = shown_name(r.where) + ": required_version";
    auto c = protocol::parse_version_constraint(r.constraint);
    if (!c && choosing)
      return fail(errc::kOpentofuVersionUnavailable, where + ": " + c.error().message);
    if (c) out.push_back({where, std::move(*c)});
  }
  return out;
}

Result<TofuChoice> choose_tofu(const protocol::JobManifest& manifest, const TofuChoiceInputs& inputs) {
  const protocol::SavedPlanRef* plan =
      manifest.type == protocol::RunType::apply && manifest.saved_plan ? &*manifest.saved_plan : nullptr;
  TofuChoice choice{inputs.tofu_binary, {}, {}, {}};
  if (!plan) {
    auto requirements = version_requirements(manifest, inputs);
    if (!requirements) return std::unexpected(requirements.error());
    choice.requirements = std::move(*requirements);
  }
  if (plan ? plan->tofu_build.empty() : choice.requirements.empty()) return choice;
  if (inputs.versions_dir.empty()) {
    if (!plan) return choice;  // tofu.binary, checked against them once it says its version
    return fail(errc::kOpentofuVersionUnavailable,
                "the plan was made with the tofu.versionsDir build " + plan->tofu_build +
                    ", and this agent has no tofu.versionsDir");
  }
  auto chosen = [&]() -> Result<TofuBuild> {
    auto list = list_tofu_builds(inputs.versions_dir);
    if (!list) return std::unexpected(list.error());
    return plan ? find_tofu_build(*list, plan->tofu_build) : select_tofu_build(*list, choice.requirements);
  }();
  if (!chosen)
    return std::unexpected(protocol::as_run_failure(chosen.error(), errc::kOpentofuVersionUnavailable));
  if (inputs.static_only) {
    auto interpreter = confine::elf_interpreter(chosen->binary.string());
    if (!interpreter || *interpreter)
      return fail(errc::kOpentofuVersionUnavailable,
                  "the tofu.versionsDir build " + chosen->name +
                      (interpreter ? " is dynamically linked; use a statically linked build "
                                     "(CGO_ENABLED=0, as OpenTofu's releases are)"
                                   : ": " + interpreter.error()));
  }
  choice.binary = chosen->binary;
  choice.build = chosen->name;
  choice.said = "OpenTofu " + chosen->name + " of tofu.versionsDir, " +
                (plan ? std::string("as for the plan") : "for " + describe(choice.requirements));
  return choice;
}

Result<std::string> check_tofu_version(const protocol::JobManifest& manifest, const TofuChoice& choice,
                                       const std::string& reported, bool has_versions_dir) {
  const std::string which =
      choice.build.empty() ? "tofu.binary" : "the tofu.versionsDir build " + choice.build;
  if (manifest.type == protocol::RunType::apply && manifest.saved_plan) {
    const std::string& made_by = manifest.saved_plan->tofu_version;
    if (!made_by.empty() && made_by != reported)
      return fail(errc::kOpentofuVersionUnavailable,
                  "the plan was made with OpenTofu " + shown_name(made_by) + ", and " + which +
                      " is " + shown_name(reported) +
                      "; a saved plan applies only with the OpenTofu that made it: plan again");
  }
  auto version = protocol::parse_tofu_version(reported);
  if (!version) {
    if (choice.requirements.empty()) return std::string{};
    return fail(errc::kOpentofuVersionUnavailable,
                which + " reports a version that cannot be compared: " + version.error().message);
  }
  for (const auto& r : choice.requirements)
    if (!protocol::satisfies(*version, r.constraint))
      return fail(errc::kOpentofuVersionUnavailable,
                  which + " is OpenTofu " + shown_name(reported) + ", which does not satisfy " +
                      r.where + " \"" + shown_name(r.constraint.text) + "\"" +
                      (has_versions_dir ? ""
                                        : "; this agent has no tofu.versionsDir to choose another "
                                          "build from"));
  if (auto named = protocol::parse_tofu_version(choice.build);
      named && protocol::compare(*named, *version) != 0)
    return "warning: the tofu.versionsDir build " + choice.build + " says it is OpenTofu " + reported +
           "; name its directory after the version it is";
  return std::string{};
}

}  // namespace takosumi::runner
