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
  std::vector<std::string> files;          // relative to the scanned directory, sorted
  bool complete = true;
  std::string incomplete_reason;  // the first thing the scan could not follow
  // Before init: a module with a remote source exists; only the scan after init can read it.
  bool remote_modules_pending = false;
};

// Scans every .tf, .tf.json, .tofu and .tofu.json file under dir. Hidden directories are skipped,
// except dir/.terraform/modules, where `tofu init` puts downloaded modules. Incomplete: more than
// 10000 files, a file over 4 MiB, directories nested deeper than 64, a symbolic link to a file of
// these kinds or to a directory, a file that cannot be read or parsed, a local module path that
// leaves dir or goes through a hidden directory, and - unless dir/.terraform/modules exists - a
// module with a remote source. Fails (io_error) only when dir itself cannot be listed.
Result<ModuleScan> scan_module(const std::filesystem::path& dir);

// The first violation of the Run's effective policy, in this order: a provider not allowed or
// denied (provider_policy_denied), provisioners without allow_provisioners
// (provisioner_denied), external data without allow_external_data (external_data_denied), an
// incomplete scan while the policy has a provider list (provider_policy_denied). Messages name
// the provider or file and line, and how to allow it.
Status check_module_policy(const ModuleScan& scan, const protocol::RunPolicy& policy);

// After init: every provider the lock file selected (read_locked_providers) passes the same
// provider rules, else provider_policy_denied.
Status check_locked_providers(const std::set<std::string>& locked,
                              const protocol::RunPolicy& policy);

}  // namespace takosumi::runner
