#include "runner/policy/module_policy.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/failure_codes.hpp"
#include "runner/policy/hcl_scan.hpp"
#include "runner/policy/module_facts.hpp"
#include "runner/policy/module_files.hpp"
#include "runner/policy/tf_json_scan.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxConfigFile = 4 * 1024 * 1024;
// All files read by one scan together: links can show one large file under many names.
constexpr std::size_t kMaxScanBytes = 64 * 1024 * 1024;

// bytes_left is what the scan may still read; a file past it fails with limit_exceeded.
Result<ConfigBody> read_config(const fs::path& path, std::size_t& bytes_left) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return fail(errc::kIoError, "could not read: " + ec.message());
  if (size > kMaxConfigFile)
    return fail(errc::kPayloadTooLarge,
                "file too large (" + std::to_string(size) + " bytes, the limit is 4 MiB)");
  if (size > bytes_left)
    return fail(errc::kLimitExceeded, "the scan read more than 64 MiB of configuration files");
  bytes_left -= size;
  auto text = read_file(path, kMaxConfigFile);
  if (!text) return fail(text.error().code, "could not read: " + text.error().message);
  if (path.filename().string().ends_with(".json")) return parse_tf_json(*text);
  return parse_hcl(*text);
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool has_provider_list(const protocol::RunPolicy& policy) {
  return policy.allowed_providers.has_value() || !policy.denied_providers.empty();
}

// `who` says where the provider was found: "the module uses" or "the lock file selects".
Status check_provider(const std::string& address, const protocol::RunPolicy& policy,
                      std::string_view who) {
  if (address == kBuiltinTerraformProvider) return {};
  const std::string head = std::string(who) + " provider " + address;
  if (contains(policy.denied_providers, address))
    return fail(errc::kProviderPolicyDenied,
                head + ", which the Run's policy denies; remove it from deniedProviders (of the "
                       "Capsule policy and of the agent pool policy) to allow it");
  if (policy.allowed_providers && !contains(*policy.allowed_providers, address))
    return fail(errc::kProviderPolicyDenied,
                head + ", which is not on the Run's allowed provider list; add it to "
                       "allowedProviders of the Capsule policy (and of the agent pool policy when "
                       "it has that list) to allow it");
  return {};
}

std::string first_of(const std::vector<std::string>& found) {
  std::string out = found.front();
  if (found.size() > 1) out += " (and " + std::to_string(found.size() - 1) + " more)";
  return out;
}

}  // namespace

namespace {

fs::path normal_directory(const fs::path& dir) {
  // Lexically normal, without a trailing separator, so that paths compare.
  std::string normal = dir.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

void mark_incomplete(ModuleScan& scan, const std::string& reason) {
  if (scan.complete) scan.incomplete_reason = reason;
  scan.complete = false;
}

// Reads one directory's files into scan; returns its local module calls.
std::vector<LocalModuleCall> scan_directory(const ModuleTree& tree, const ModuleDirFiles& dir,
                                            std::size_t& bytes_left, ModuleScan& scan) {
  ModuleFacts facts({dir.dir, tree.post_init()}, scan);
  for (const auto& name : dir.names) {
    const std::string file = dir.dir.empty() ? name : dir.dir + "/" + name;
    scan.files.push_back(file);
    // Through the working directory, as OpenTofu opens it; every link on the way was resolved
    // inside the checkout by the listing.
    auto body = read_config(tree.working_dir() / file, bytes_left);
    if (!body) {
      mark_incomplete(scan, file + ": " + body.error().message);
      continue;
    }
    facts.add_file(*body, file);
  }
  facts.finish();
  return facts.local_calls();
}

// As OpenTofu merges a directory's files: x.tofu replaces x.tf, and x.tofu.json x.tf.json (the
// agent's own takosumi_override.tofu, which the scan does not list, replaces a module's
// takosumi_override.tf); an override file that sets required_version replaces every constraint
// before it (files in name order, primary files first).
void merge_required_versions(ModuleScan& scan) {
  auto replaced = [&](const ModuleScan::RequiredVersion& r) {
    std::string tofu;
    if (r.file.ends_with(".tf")) tofu = r.file.substr(0, r.file.size() - 3) + ".tofu";
    if (r.file.ends_with(".tf.json")) tofu = r.file.substr(0, r.file.size() - 8) + ".tofu.json";
    return !tofu.empty() && (tofu == kAgentOverrideFile ||
                             std::binary_search(scan.files.begin(), scan.files.end(), tofu));
  };
  auto& kept = scan.required_versions;
  std::erase_if(kept, replaced);
  std::string last_override;
  for (const auto& r : kept)
    if (is_override_file(r.file)) last_override = std::max(last_override, r.file);
  if (!last_override.empty() || scan.override_versions_cut) {
    std::erase_if(kept, [&](const ModuleScan::RequiredVersion& r) { return r.file != last_override; });
    scan.required_versions_cut = scan.override_versions_cut;
  }
}

}  // namespace

Result<ModuleScan> scan_module(const fs::path& checkout, const fs::path& working_dir) {
  ModuleTree tree(normal_directory(checkout), normal_directory(working_dir));
  TAKOSUMI_TRY(tree.start());
  ModuleScan scan;
  std::size_t bytes_left = kMaxScanBytes;
  // Each round reads what the last one listed and lists what its local module calls name.
  for (auto dirs = tree.take_new(); !dirs.empty(); dirs = tree.take_new())
    for (const auto& dir : dirs)
      for (const auto& call : scan_directory(tree, dir, bytes_left, scan))
        tree.add_call(call.where, call.dir);
  if (!tree.incomplete_reason().empty()) mark_incomplete(scan, tree.incomplete_reason());
  scan.plugin_files = tree.plugin_files();
  std::sort(scan.files.begin(), scan.files.end());
  merge_required_versions(scan);
  return scan;
}

Result<ModuleScan> scan_module(const fs::path& dir) { return scan_module(dir, dir); }

Status check_module_policy(const ModuleScan& scan, const protocol::RunPolicy& policy) {
  if (!scan.encryption.empty())
    return fail(errc::kEncryptionConfigDenied,
                first_of(scan.encryption) +
                    ": OpenTofu's encryption configuration can run programs (external key "
                    "providers and methods) and the agent encrypts every state itself; remove the "
                    "encryption block from the module");
  if (!scan.backend_overrides.empty())
    return fail(errc::kBackendConfigDenied,
                first_of(scan.backend_overrides) +
                    ": it would replace the agent's local backend and the state would leave the "
                    "agent; remove it (a backend or cloud block in a primary file is ignored)");
  if (!scan.plugin_files.empty())
    return fail(errc::kProviderPolicyDenied,
                first_of(scan.plugin_files) + "; providers come only from the agent's mirror: "
                                              "remove it from the repository");
  for (const auto& provider : scan.providers)
    TAKOSUMI_TRY(check_provider(provider, policy, "the module uses"));
  if (!scan.provisioners.empty() && !policy.allow_provisioners)
    return fail(errc::kProvisionerDenied,
                first_of(scan.provisioners) +
                    ": provisioners run commands on the agent and the Run's policy does not allow "
                    "them; set allowProvisioners to true in the Capsule policy and in the agent "
                    "pool policy to allow them");
  if (!scan.external_data.empty() && !policy.allow_external_data)
    return fail(errc::kExternalDataDenied,
                first_of(scan.external_data) +
                    ": reading data through a program (the external data source, local_command) or a backend "
                    "(terraform_remote_state) can run any program, and the Run's policy does not "
                    "allow it; set allowExternalData to true in the Capsule policy and in the "
                    "agent pool policy to allow it");
  // What the scan could not read may hold anything; whatever the policy refuses, it refuses
  // unread code too.
  if (!scan.complete) {
    const std::string why = "the module could not be fully scanned: " + scan.incomplete_reason;
    if (has_provider_list(policy))
      return fail(errc::kProviderPolicyDenied,
                  why + "; a Run with a provider list refuses what it cannot check");
    if (!policy.allow_provisioners)
      return fail(errc::kProvisionerDenied,
                  why + "; provisioners are not allowed, so what cannot be checked is refused");
    if (!policy.allow_external_data)
      return fail(errc::kExternalDataDenied,
                  why + "; the external data source is not allowed, so what cannot be checked "
                        "is refused");
  }
  return {};
}

bool provider_allowed(const std::string& address, const protocol::RunPolicy& policy) {
  return check_provider(address, policy, "").has_value();
}

Status check_locked_providers(const std::set<std::string>& locked,
                              const protocol::RunPolicy& policy) {
  for (const auto& provider : locked) {
    TAKOSUMI_TRY(check_provider(provider, policy, "the lock file selects"));
    // The external provider's only purpose is running programs; a module may reach its data
    // source in ways a text scan misses.
    if (!policy.allow_external_data && provider.ends_with("/external"))
      return fail(errc::kExternalDataDenied,
                  "the lock file selects " + provider +
                      ", which runs programs, and the Run's policy does not allow external data; "
                      "set allowExternalData to true in the Capsule policy to allow it");
  }
  return {};
}

}  // namespace takosumi::runner
