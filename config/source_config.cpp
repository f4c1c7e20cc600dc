#include "config/source_config.hpp"

#include "common/error_codes.hpp"
#include "config/yaml_fields.hpp"

namespace takosumi::config {

Status load_source(const YAML::Node& root, const std::filesystem::path& base, SourceConfig& out) {
  const YAML::Node node = root["source"];
  if (!node || node.IsNull()) return {};
  TAKOSUMI_TRY(yaml_known_keys(
      node, {"fileRoots", "fetchTimeoutSeconds", "maxFetchMiB", "caFile", "allowLoopbackHosts"}, "source"));
  auto roots = yaml_strings(node, "fileRoots", "source");
  auto timeout = yaml_int(node, "fetchTimeoutSeconds", "source", 300, 1, 86400);
  auto max = yaml_int(node, "maxFetchMiB", "source", 1024, 1, 1 << 20);
  auto ca = yaml_string(node, "caFile", "source", "");
  auto loopback = yaml_bool(node, "allowLoopbackHosts", "source", false);
  if (const Error* e = first_error(roots, timeout, max, ca, loopback)) return std::unexpected(*e);
  out.allow_loopback_hosts = *loopback;
  for (const auto& r : *roots) {
    const std::filesystem::path path = config_path(base, r);
    if (path == "/")
      return fail(errc::kConfigInvalid, "source.fileRoots: \"/\" would make every local directory a source");
    out.file_roots.push_back(path.lexically_normal());
  }
  out.fetch_timeout = std::chrono::seconds(*timeout);
  out.max_fetch_mib = static_cast<std::uint64_t>(*max);
  if (!ca->empty()) out.ca_file = config_path(base, *ca);
  return {};
}

}  // namespace takosumi::config
