#pragma once
// Turns the parsed files of one module directory into ModuleScan entries. Provider local names
// resolve within a module (all files of one directory), so a directory's files are added first
// and finish() resolves them.
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/policy/config_body.hpp"
#include "runner/policy/module_policy.hpp"

namespace takosumi::runner {

inline constexpr std::string_view kBuiltinTerraformProvider = "terraform.io/builtin/terraform";

// "aws" → registry.opentofu.org/hashicorp/aws, "acme/x" → registry.opentofu.org/acme/x,
// "host/ns/x" kept; lower case. nullopt when the result is not a valid source address.
std::optional<std::string> normalize_provider_source(std::string_view source);

// OpenTofu's override files: base name "override" or ending in "_override", any config extension.
bool is_override_file(std::string_view path);

struct ModuleLocation {
  // This module's directory as OpenTofu names it: relative to the working directory, generic
  // form, "" for the working directory ("../../modules/label" elsewhere in the checkout).
  std::string dir;
  bool post_init = false;  // remote modules have been downloaded into .terraform/modules
};

// A local module call: the directory it names, lexically cleaned and relative to the working
// directory as OpenTofu computes it (filepath.Join of the caller's directory and the source).
struct LocalModuleCall {
  std::string where;  // "<file>:<line>: module \"x\" source \"../m\"", for messages
  std::string dir;
};

class ModuleFacts {
 public:
  // scan must outlive this object; problems are recorded in it as an incomplete scan.
  ModuleFacts(ModuleLocation where, ModuleScan& scan);

  void add_file(const ConfigBody& body, const std::string& file);
  void finish();
  // The local module calls of the files added so far; the scan lists and reads those too.
  const std::vector<LocalModuleCall>& local_calls() const { return calls_; }

 private:
  struct DataSource {
    std::string type;
    std::string local_name;
    std::string description;
  };

  void incomplete(std::string reason);
  void add_terraform_block(const ConfigBlock& block, const std::string& file);
  void add_required_version(const std::string& file, int line, std::string_view text);
  void add_required_providers(const ConfigBlock& block, const std::string& file);
  void add_required(const ConfigAttribute& attr, const std::string& file);
  void add_resource(const ConfigBlock& block, const std::string& file, std::string_view mode);
  void add_provisioners(const ConfigBlock& block, const std::string& file, std::string_view in);
  void add_import_or_removed(const ConfigBlock& block, const std::string& file);
  void check_module_source(const ConfigBlock& block, const std::string& file);
  std::optional<std::string> provider_argument(const ConfigBlock& block, const std::string& file);
  std::set<std::string> resolve(const std::string& local_name);

  ModuleLocation where_;
  ModuleScan& scan_;
  std::map<std::string, std::set<std::string>> required_;  // local name → source addresses
  std::vector<std::string> used_;                          // local names used without a source
  std::vector<DataSource> data_;
  std::vector<LocalModuleCall> calls_;
};

}  // namespace takosumi::runner
