#include "config/sandbox_config.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "config/yaml_fields.hpp"
#include "protocol/secret_bundle.hpp"

namespace takosumi::config {
namespace {

std::filesystem::path resolve(const std::filesystem::path& base, const std::string& p) {
  std::filesystem::path path(p);
  return path.is_absolute() ? path : base / path;
}

Result<std::vector<std::string>> provider_list(const YAML::Node& node, const std::string& key) {
  auto list = yaml_strings(node, key, "policy");
  if (!list) return std::unexpected(list.error());
  for (const auto& address : *list)
    if (!protocol::is_qualified_provider_address(address))
      return fail(errc::kConfigInvalid,
                  "policy." + key + ": \"" + address +
                      "\" is not a fully qualified provider source address (e.g. "
                      "registry.opentofu.org/hashicorp/aws)");
  std::sort(list->begin(), list->end());
  list->erase(std::unique(list->begin(), list->end()), list->end());
  return list;
}

Result<std::optional<std::vector<std::uint16_t>>> tcp_ports(const YAML::Node& node) {
  if (!node["tcpConnectPorts"] || node["tcpConnectPorts"].IsNull())
    return std::optional<std::vector<std::uint16_t>>{};
  if (!node["tcpConnectPorts"].IsSequence())
    return fail(errc::kConfigInvalid, "sandbox.tcpConnectPorts must be a list of port numbers");
  std::vector<std::uint16_t> ports;
  for (const auto& item : node["tcpConnectPorts"]) {
    int port = 0;
    if (!item.IsScalar() || !YAML::convert<int>::decode(item, port) || port < 1 || port > 65535)
      return fail(errc::kConfigInvalid, "sandbox.tcpConnectPorts: \"" +
                                            (item.IsScalar() ? item.Scalar() : std::string("?")) +
                                            "\" is not a port number (1-65535)");
    ports.push_back(static_cast<std::uint16_t>(port));
  }
  return std::optional<std::vector<std::uint16_t>>(std::move(ports));
}

Status load_exec_control(const YAML::Node& node, const std::filesystem::path& base, SandboxConfig& out) {
  auto control = yaml_string(node, "execControl", "sandbox", "required");
  if (!control) return std::unexpected(control.error());
  if (*control != "required" && *control != "best-effort")
    return fail(errc::kConfigInvalid, "sandbox.execControl must be required or best-effort");
  out.exec_control_required = *control == "required";
  if (node["execAllow"]) {
    auto allow = yaml_strings(node, "execAllow", "sandbox");
    if (!allow) return std::unexpected(allow.error());
    out.exec_allow.clear();
    for (const auto& p : *allow) {
      if (!std::filesystem::path(p).is_absolute())
        return fail(errc::kConfigInvalid, "sandbox.execAllow: \"" + p + "\" must be an absolute path");
      out.exec_allow.emplace_back(p);
    }
  }
  auto ports = tcp_ports(node);
  if (!ports) return std::unexpected(ports.error());
  out.tcp_connect_ports = std::move(*ports);
  auto confine = yaml_string(node, "confine", "sandbox", "");
  if (!confine) return std::unexpected(confine.error());
  if (!confine->empty()) out.confine = resolve(base, *confine);
  auto jit = yaml_bool(node, "allowJit", "sandbox", false);
  if (!jit) return std::unexpected(jit.error());
  out.allow_jit = *jit;
  return {};
}

}  // namespace

Status load_sandbox(const YAML::Node& root, const std::filesystem::path& base, SandboxConfig& out) {
  const YAML::Node node = root["sandbox"];
  if (!node || node.IsNull()) return {};  // every default holds
  TAKOSUMI_TRY(yaml_known_keys(node, {"mode", "bubblewrap", "network", "writablePaths", "execControl",
                                      "execAllow", "tcpConnectPorts", "confine", "allowJit"},
                                "sandbox"));
  auto mode = yaml_string(node, "mode", "sandbox", "bubblewrap");
  auto bwrap = yaml_string(node, "bubblewrap", "sandbox", "/usr/bin/bwrap");
  auto network = yaml_string(node, "network", "sandbox", "default");
  auto writable = yaml_strings(node, "writablePaths", "sandbox");
  if (const Error* e = first_error(mode, bwrap, network, writable)) return std::unexpected(*e);
  if (*mode != "bubblewrap" && *mode != "none")
    return fail(errc::kConfigInvalid, "sandbox.mode must be bubblewrap or none");
  if (*network != "default" && *network != "none")
    return fail(errc::kConfigInvalid, "sandbox.network must be default or none");
  out.enabled = *mode == "bubblewrap";
  out.bubblewrap = resolve(base, *bwrap);
  out.network = *network == "default";
  for (const auto& p : *writable) {
    const auto path = resolve(base, p);
    if (path == "/" || path.empty())
      return fail(errc::kConfigInvalid, "sandbox.writablePaths: \"" + p + "\" would make everything writable");
    out.writable_paths.push_back(path);
  }
  return load_exec_control(node, base, out);
}

Status load_limits(const YAML::Node& root, LimitsConfig& out) {
  const YAML::Node node = root["limits"];
  if (!node || node.IsNull()) return {};
  TAKOSUMI_TRY(yaml_known_keys(
      node, {"memoryMiB", "cpuSeconds", "maxLogBytes", "maxPlanJsonBytes", "maxStateBytes", "tmpMiB",
             "maxProcesses", "workspaceMiB"},
      "limits"));
  constexpr std::int64_t kTiB = std::int64_t{1} << 40;
  auto memory = yaml_int(node, "memoryMiB", "limits", kDefaultMemoryMiB, 0, 1 << 24);
  auto workspace = yaml_int(node, "workspaceMiB", "limits", kDefaultWorkspaceMiB, 0, 1 << 24);
  auto cpu = yaml_int(node, "cpuSeconds", "limits", 0, 0, 365 * 24 * 3600);
  auto logs = yaml_int(node, "maxLogBytes", "limits", 16 << 20, 4096, kTiB);
  auto plan = yaml_int(node, "maxPlanJsonBytes", "limits", 64 << 20, 4096, kTiB);
  auto state = yaml_int(node, "maxStateBytes", "limits", static_cast<std::int64_t>(kDefaultMaxStateBytes),
                       4096, kTiB);
  auto tmp = yaml_int(node, "tmpMiB", "limits", 512, 1, 1 << 20);
  auto processes = yaml_int(node, "maxProcesses", "limits", 512, 0, 1 << 22);
  if (const Error* e = first_error(memory, workspace, cpu, logs, plan, state, tmp, processes))
    return std::unexpected(*e);
  out.workspace_mib = static_cast<std::uint64_t>(*workspace);
  out.tmp_mib = static_cast<std::uint64_t>(*tmp);
  out.max_processes = static_cast<std::uint64_t>(*processes);
  out.memory_mib = static_cast<std::uint64_t>(*memory);
  out.cpu_seconds = static_cast<std::uint64_t>(*cpu);
  out.max_log_bytes = static_cast<std::uint64_t>(*logs);
  out.max_plan_json_bytes = static_cast<std::uint64_t>(*plan);
  out.max_state_bytes = static_cast<std::uint64_t>(*state);
  return {};
}

Status load_pool_policy(const YAML::Node& root, protocol::RunPolicy& out) {
  const YAML::Node node = root["policy"];
  if (!node || node.IsNull()) {
    out.allow_provisioners = true;  // no pool restriction: each Capsule's policy decides
    out.allow_external_data = true;
    return {};
  }
  TAKOSUMI_TRY(yaml_known_keys(
      node, {"allowedProviders", "deniedProviders", "allowProvisioners", "allowExternalData"},
      "policy"));
  if (node["allowedProviders"]) {
    auto allowed = provider_list(node, "allowedProviders");
    if (!allowed) return std::unexpected(allowed.error());
    out.allowed_providers = std::move(*allowed);
  }
  auto denied = provider_list(node, "deniedProviders");
  auto provisioners = yaml_bool(node, "allowProvisioners", "policy", true);
  auto external = yaml_bool(node, "allowExternalData", "policy", true);
  if (const Error* e = first_error(denied, provisioners, external)) return std::unexpected(*e);
  out.denied_providers = std::move(*denied);
  out.allow_provisioners = *provisioners;
  out.allow_external_data = *external;
  return {};
}

}  // namespace takosumi::config
