#include "runner/policy/module_facts.hpp"

#include <algorithm>

#include "protocol/secret_bundle.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  });
  return out;
}

std::string at(const std::string& file, int line) { return file + ":" + std::to_string(line); }

const ConfigAttribute* find_attribute(const ConfigBody& body, std::string_view name) {
  for (const auto& a : body.attributes)
    if (a.name == name) return &a;
  return nullptr;
}

// OpenTofu's implied provider: the resource type up to its first underscore.
std::string implied_local_name(std::string_view type) {
  return std::string(type.substr(0, type.find('_')));
}

// A reference's first name: aws.west → aws. Strings come from JSON, where references are
// written as strings, and from the legacy quoted form.
std::optional<std::string> reference_root(const ConfigValue& v) {
  if (v.kind == ValueKind::reference) return v.text;
  if (v.kind == ValueKind::string) {
    auto root = v.text.substr(0, v.text.find_first_of(".["));
    if (!root.empty()) return root;
  }
  return std::nullopt;
}

// What OpenTofu treats as a local path (addrs.ParseModuleSource).
bool is_local_source(std::string_view s) {
  return s.starts_with("./") || s.starts_with("../") || s.starts_with(".\\") ||
         s.starts_with("..\\");
}

// OpenTofu turns every backslash of a local source into a separator before cleaning the path
// (addrs.parseModuleSourceLocal), on every platform: ..\evil is ../evil.
std::string local_source_path(std::string_view s) {
  std::string out(s);
  std::replace(out.begin(), out.end(), '\\', '/');
  return out;
}

bool has_template(std::string_view s) {
  return s.find("${") != std::string_view::npos || s.find("%{") != std::string_view::npos;
}

// Data sources and ephemeral resources that run programs (docs/security.md, "Inventory"): the
// external data source, hashicorp/local's local_command (also under another provider's name: the
// type alone decides), and terraform_remote_state, which configures any backend, whose type may
// be computed — kubernetes (exec), s3 (credential_process) and azurerm (az) run programs, and
// every one reaches whatever host or file the module names. "" or a note for the message.
std::optional<std::string> runs_programs(const std::string& type, const std::set<std::string>& providers) {
  const bool external_provider = std::any_of(providers.begin(), providers.end(), [](const auto& a) {
    return a.ends_with("/hashicorp/external");
  });
  if (type == "external" || external_provider) return "";
  if (type == "local_command") return " (runs a command)";
  if (type == "terraform_remote_state") return " (configures a backend, which can run programs)";
  return std::nullopt;
}

}  // namespace

// OpenTofu's override files: base name "override" or ending in "_override", any config extension.
bool is_override_file(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  for (std::string_view ext : {".tofu.json", ".tf.json", ".tofu", ".tf"})
    if (name.ends_with(ext)) {
      name.remove_suffix(ext.size());
      break;
    }
  return name == "override" || name.ends_with("_override");
}

std::optional<std::string> normalize_provider_source(std::string_view source) {
  std::string out = lower(source);
  const auto slashes = std::count(out.begin(), out.end(), '/');
  if (slashes == 0) out = "registry.opentofu.org/hashicorp/" + out;
  if (slashes == 1) out = "registry.opentofu.org/" + out;
  if (slashes > 2 || !protocol::is_qualified_provider_address(out)) return std::nullopt;
  return out;
}

ModuleFacts::ModuleFacts(ModuleLocation where, ModuleScan& scan)
    : where_(std::move(where)), scan_(scan) {}

void ModuleFacts::incomplete(std::string reason) {
  if (!scan_.complete) return;
  scan_.complete = false;
  scan_.incomplete_reason = std::move(reason);
}

void ModuleFacts::add_file(const ConfigBody& body, const std::string& file) {
  for (const auto& block : body.blocks) {
    const auto& type = block.type;
    if (type == "terraform") {
      add_terraform_block(block, file);
    } else if (type == "resource" || type == "data" || type == "ephemeral") {
      add_resource(block, file, type == "resource" ? "" : type);
    } else if (type == "provider" && block.labels.size() == 1) {
      used_.push_back(block.labels[0]);
    } else if (type == "module" && block.labels.size() == 1) {
      check_module_source(block, file);
    } else if (type == "check") {
      for (const auto& nested : block.body.blocks)
        if (nested.type == "data") add_resource(nested, file, "data");
    } else if (type == "import" || type == "removed") {
      add_import_or_removed(block, file);
    }
  }
}

// OpenTofu's own state and plan encryption can name key providers and methods that run a
// program (external) in init, plan, show and apply; state encryption is the agent's job, so any
// encryption block of a module is refused outright. A backend or cloud block in a primary file
// never takes effect (the agent's override file forces the local backend), but one in an override
// file merged after the agent's would replace it, and the state would leave the agent.
void ModuleFacts::add_terraform_block(const ConfigBlock& block, const std::string& file) {
  // Not a literal: OpenTofu refuses it at init with its own message.
  if (const auto* required = find_attribute(block.body, "required_version");
      required && where_.dir.empty() && required->value.kind == ValueKind::string)
    add_required_version(file, required->line, required->value.text);
  for (const auto& nested : block.body.blocks) {
    if (nested.type == "required_providers") add_required_providers(nested, file);
    if (nested.type == "encryption")
      scan_.encryption.push_back(at(file, nested.line) + ": terraform { encryption }");
    if ((nested.type == "backend" || nested.type == "cloud") && is_override_file(file))
      scan_.backend_overrides.push_back(
          at(file, nested.line) + ": " + nested.type +
          (nested.labels.empty() ? "" : " \"" + nested.labels[0].substr(0, 64) + "\"") +
          " in an override file");
  }
}

// Bounded: a module of many terraform blocks costs the agent no more than a few of them. A
// repeat is dropped only within its file (the merge may drop a whole file); primary and override
// files are counted apart (the merge keeps one or the other).
void ModuleFacts::add_required_version(const std::string& file, int line, std::string_view text) {
  auto& kept = scan_.required_versions;
  const std::string constraint(text.substr(0, 257));
  const bool override_file = is_override_file(file);
  std::size_t same_kind = 0;
  for (const auto& r : kept) {
    if (r.file == file && r.constraint == constraint) return;
    if (is_override_file(r.file) == override_file) ++same_kind;
  }
  if (same_kind >= ModuleScan::kMaxRequiredVersions) {
    (override_file ? scan_.override_versions_cut : scan_.required_versions_cut) = true;
    return;
  }
  kept.push_back({file, at(file, line), constraint});
}

void ModuleFacts::add_required_providers(const ConfigBlock& block, const std::string& file) {
  for (const auto& attr : block.body.attributes) add_required(attr, file);
}

// NAME = { source = "...", version = "..." }, NAME = { version = "..." } or the legacy
// NAME = "version"; the last two mean hashicorp/NAME.
void ModuleFacts::add_required(const ConfigAttribute& attr, const std::string& file) {
  const std::string where = at(file, attr.line) + ": required_providers " + attr.name;
  std::string source = attr.name;
  if (attr.value.kind == ValueKind::object) {
    for (const auto& item : attr.value.items) {
      if (item.key != "source") continue;
      if (item.value.kind != ValueKind::string)
        return incomplete(where + ": source is not a literal string");
      source = item.value.text;
    }
  } else if (attr.value.kind != ValueKind::string) {
    return incomplete(where + " is neither an object nor a version string");
  }
  auto address = normalize_provider_source(source);
  if (!address)
    return incomplete(where + ": \"" + source.substr(0, 128) +
                      "\" is not a provider source address");
  required_[attr.name].insert(std::move(*address));
}

void ModuleFacts::add_resource(const ConfigBlock& block, const std::string& file,
                               std::string_view mode) {
  if (block.labels.size() != 2) return;  // OpenTofu refuses it before anything runs
  const auto& type = block.labels[0];
  const std::string address =
      (mode.empty() ? "" : std::string(mode) + ".") + type + "." + block.labels[1];
  auto local_name = provider_argument(block, file);
  if (!local_name) local_name = implied_local_name(type);
  used_.push_back(*local_name);
  if (mode == "data" || mode == "ephemeral")
    data_.push_back({type, *local_name, at(file, block.line) + ": " + address});
  add_provisioners(block, file, address);
}

void ModuleFacts::add_provisioners(const ConfigBlock& block, const std::string& file,
                                   std::string_view in) {
  for (const auto& nested : block.body.blocks) {
    if (nested.type != "provisioner") continue;
    const std::string kind = nested.labels.empty() ? "provisioner" : nested.labels[0];
    scan_.provisioners.push_back(at(file, nested.line) + ": " + kind + " in " + std::string(in));
  }
}

// import { to = TYPE.NAME } needs the resource's provider even when no resource block declares
// it (config generation). A removed resource's provider comes from the state, as OpenTofu
// does it, and so shows in the lock file; removed blocks may carry destroy-time provisioners.
void ModuleFacts::add_import_or_removed(const ConfigBlock& block, const std::string& file) {
  auto local_name = provider_argument(block, file);
  if (!local_name && block.type == "import") {
    const auto* target = find_attribute(block.body, "to");
    auto root = target ? reference_root(target->value) : std::nullopt;
    if (root && *root != "module") local_name = implied_local_name(*root);
  }
  if (local_name) used_.push_back(*local_name);
  if (block.type == "removed") add_provisioners(block, file, "a removed block");
}

std::optional<std::string> ModuleFacts::provider_argument(const ConfigBlock& block,
                                                          const std::string& file) {
  const auto* attr = find_attribute(block.body, "provider");
  if (!attr) return std::nullopt;
  auto root = reference_root(attr->value);
  if (!root)
    incomplete(at(file, attr->line) + ": the provider argument of " + block.type +
               " is not a provider reference");
  return root;
}

void ModuleFacts::check_module_source(const ConfigBlock& block, const std::string& file) {
  const std::string where = at(file, block.line) + ": module \"" + block.labels[0] + "\"";
  const auto* attr = find_attribute(block.body, "source");
  if (!attr || attr->value.kind != ValueKind::string || has_template(attr->value.text))
    return incomplete(where + " has no literal source");
  const std::string& source = attr->value.text;
  if (!is_local_source(source)) {
    // Not downloaded yet: the scan after `tofu init` reads it from .terraform/modules.
    if (!where_.post_init) scan_.remote_modules_pending = true;
    return;
  }
  std::string dir =
      (fs::path(where_.dir) / local_source_path(source)).lexically_normal().generic_string();
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  if (dir == ".") dir.clear();
  calls_.push_back({where + " source \"" + source.substr(0, 256) + "\"", std::move(dir)});
}

std::set<std::string> ModuleFacts::resolve(const std::string& local_name) {
  if (auto it = required_.find(local_name); it != required_.end()) return it->second;
  if (local_name == "terraform") return {std::string(kBuiltinTerraformProvider)};
  auto address = normalize_provider_source(local_name);
  if (!address) {
    incomplete("provider local name \"" + local_name.substr(0, 64) + "\" in " +
               (where_.dir.empty() ? "the root module" : where_.dir) + " is not valid");
    return {};
  }
  return {*address};
}

void ModuleFacts::finish() {
  auto add = [this](const std::set<std::string>& addresses) {
    for (const auto& a : addresses)
      if (a != kBuiltinTerraformProvider) scan_.providers.insert(a);
  };
  for (const auto& [name, addresses] : required_) add(addresses);
  for (const auto& name : used_) add(resolve(name));
  for (const auto& d : data_) {
    if (auto why = runs_programs(d.type, resolve(d.local_name)))
      scan_.external_data.push_back(d.description + *why);
  }
}

}  // namespace takosumi::runner
