#pragma once
// The Run policy check of a module's source, made before `tofu init` downloads or runs anything
// and again after it (on the downloaded modules in .terraform/modules and on the lock file).
// The scan reads configuration files as text and never evaluates them; what it cannot follow it
// reports as an incomplete scan, which a Run with a provider list refuses.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "protocol/run_policy.hpp"

namespace takosumi::runner {

struct ModuleScan {
  // Fully qualified source addresses, lower case: those in required_providers (normalized to
  // registry.opentofu.org/hashicorp/NAME when host or namespace is left out), and those implied
  // by resource, data, ephemeral, provider and import blocks whose local name has no
  // required_providers entry in their module. The built-in terraform provider is never listed.
  std::set<std::string> providers;
  std::vector<std::string> provisioners;   // "<file>:<line>: local-exec in null_resource.x"
  std::vector<std::string> external_data;  // "<file>:<line>: data.external.x"
  std::vector<std::string> encryption;     // "<file>:<line>: terraform { encryption }"
  // Override files whose backend or cloud block would replace the agent's local backend.
  std::vector<std::string> backend_overrides;  // "<file>:<line>: backend \"s3\" in an override file"
  // Plugin binaries tofu would find in the module (provisioner plugins are searched in the working
  // directory and terraform.d/plugins): "<path>: ..."
  std::vector<std::string> plugin_files;
  std::vector<std::string> files;  // relative to the working directory, sorted
  bool complete = true;
  std::string incomplete_reason;  // the first thing the scan could not follow
  // Before init: a module with a remote source exists; only the scan after init can read it.
  bool remote_modules_pending = false;
  // The working directory's own `terraform { required_version = "..." }` literals, as OpenTofu
  // merges them: without those of a .tf or .tf.json file that a .tofu or .tofu.json file of the
  // same name replaces, and when an override file sets one, only the last such file's. They
  // choose a build of tofu.versionsDir; the constraints of the modules it calls are tofu's own
  // check, at init. Repeats within a file are left out; past kMaxRequiredVersions (primary and
  // override files apart) the rest are not kept and required_versions_cut says some of what
  // counts is missing; no text is kept past 257 bytes (no constraint is longer).
  struct RequiredVersion {
    std::string file;
    std::string where;  // "<file>:<line>"
    std::string constraint;
  };
  static constexpr std::size_t kMaxRequiredVersions = 32;
  std::vector<RequiredVersion> required_versions;
  bool required_versions_cut = false;
  bool override_versions_cut = false;  // the scan's count of override files' (merge input)
};

// Scans every .tf, .tf.json, .tofu and .tofu.json file OpenTofu could load when it runs in
// working_dir, a directory of the checkout (see ModuleTree in module_files.hpp): the working
// directory's tree, hidden directories included, the modules `tofu init` downloaded into its
// .terraform/modules, and every directory a local module call names elsewhere in the checkout,
// transitively. Incomplete: what ModuleTree cannot vouch for (a symbolic link that is absolute,
// dangling or leaves the checkout, a module call leaving it, the limits), a file over 4 MiB or
// that cannot be read or parsed, a module source that is not a literal, and - unless
// .terraform/modules exists - a module with a remote source. Fails (io_error) only when
// working_dir itself cannot be listed.
Result<ModuleScan> scan_module(const std::filesystem::path& checkout,
                               const std::filesystem::path& working_dir);
// The same with the working directory as the whole checkout.
Result<ModuleScan> scan_module(const std::filesystem::path& dir);

// The first violation of the Run's effective policy, in this order: an encryption block
// (encryption_config_denied, whatever the policy), a backend or cloud block in an override file
// (backend_config_denied, whatever the policy), a shipped plugin binary (provider_policy_denied,
// whatever the policy), a provider not allowed or
// denied (provider_policy_denied), provisioners without allow_provisioners
// (provisioner_denied), external data without allow_external_data (external_data_denied), an
// incomplete scan while the policy has a provider list (provider_policy_denied). Messages name
// the provider or file and line, and how to allow it.
Status check_module_policy(const ModuleScan& scan, const protocol::RunPolicy& policy);

// Whether the Run's policy lets the provider at this fully qualified, lower-case address run
// (the rules of check_module_policy, without the message).
bool provider_allowed(const std::string& address, const protocol::RunPolicy& policy);

// After init: every provider the lock file selected (read_locked_providers) passes the same
// provider rules, else provider_policy_denied.
Status check_locked_providers(const std::set<std::string>& locked,
                              const protocol::RunPolicy& policy);

}  // namespace takosumi::runner
