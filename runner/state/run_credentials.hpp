#pragma once
// The Connections and sensitive variables of one Run, in the form the tofu process receives
// them. Values exist only here (zeroed memory), in the environment of `tofu plan`/`tofu apply`,
// and — for file credentials — in 0400 files in 0700 directories inside the Run's workspace,
// which wipe() overwrites with zeros and removes. `init`, `show`, `output` and `version` never
// see a credential.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "protocol/secret_bundle.hpp"

namespace takosumi::runner {

class RunCredentials {
 public:
  RunCredentials() = default;
  // A moved-from object owns nothing, so its destructor cannot wipe the new owner's files.
  RunCredentials(RunCredentials&& other) noexcept;
  RunCredentials& operator=(RunCredentials&& other) noexcept;
  RunCredentials(const RunCredentials&) = delete;
  RunCredentials& operator=(const RunCredentials&) = delete;
  ~RunCredentials();

  // A Connection is injected only when the module's lock file selects its provider: credentials
  // for a provider the module does not use have no reason to be in the process. Every
  // credential name is checked again here (protocol/credential_names.hpp): the agent does not
  // rely on the control plane to have refused reserved names. Files go under dir/<connection id>/.
  // Errors: manifest_invalid (a name or id the agent refuses), workspace_failed (files).
  static Result<RunCredentials> prepare(const protocol::SecretBundle& bundle,
                                        const std::set<std::string>& locked_providers,
                                        const std::filesystem::path& dir);

  // Connection variables plus TF_VAR_<name> for each sensitive variable: every kind of plan
  // evaluates the configuration.
  std::vector<std::string> plan_environment() const;
  // Connection variables only: an apply takes its variable values from the saved plan.
  std::vector<std::string> apply_environment() const;
  // Names of every variable this Run may inject (never values), sorted.
  std::vector<std::string> names() const;
  // Connections not injected, as "name (provider)", for the Run's log.
  const std::vector<std::string>& skipped() const { return skipped_; }

  // Overwrites credential files with zeros, removes them and their directories, and zeroes
  // the values held in memory. Safe to call more than once.
  Status wipe();

 private:
  std::vector<SecretBytes> connection_env_;  // "NAME=value"
  std::vector<SecretBytes> variable_env_;    // "TF_VAR_name=value"
  std::vector<std::string> names_;
  std::vector<std::string> skipped_;
  std::vector<std::filesystem::path> files_;
  std::filesystem::path dir_;
};

}  // namespace takosumi::runner
