#include "controlplane/control_config.hpp"

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "config/yaml_fields.hpp"
#include "net/control_url.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::size_t kMaxTokenFile = 64 * 1024;

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

std::filesystem::path resolve(const std::filesystem::path& base, const std::string& p) {
  std::filesystem::path path(p);
  return path.is_absolute() ? path : base / path;
}

Result<std::vector<std::string>> token_lines(const std::filesystem::path& file,
                                             const std::string& key) {
  auto text = read_file(file, kMaxTokenFile);
  if (!text) return std::unexpected(Error{std::string(errc::kConfigInvalid),
                                          key + ": " + text.error().message});
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text->size()) {
    auto end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    std::string line = trim(std::string_view(*text).substr(start, end - start));
    if (!line.empty() && line.front() != '#') out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

Status load_api_token(const YAML::Node& root, const std::filesystem::path& base,
                      const std::optional<std::string>& env_token, ControlConfig& cfg) {
  if (env_token && !trim(*env_token).empty()) {
    cfg.api_token = SecretBytes::from_string(trim(*env_token));
    return {};
  }
  auto file = config::yaml_string(root, "apiTokenFile", "", "");
  if (!file) return std::unexpected(file.error());
  if (file->empty())
    return fail(errc::kConfigInvalid, std::string("apiTokenFile: no API token; set ") +
                                          kApiTokenEnv + " or apiTokenFile");
  auto lines = token_lines(resolve(base, *file), "apiTokenFile");
  if (!lines) return std::unexpected(lines.error());
  if (lines->size() != 1)
    return fail(errc::kConfigInvalid, "apiTokenFile: the file must hold exactly one token");
  cfg.api_token = SecretBytes::from_string(lines->front());
  return {};
}

Status load_pool_tokens(const YAML::Node& root, const std::filesystem::path& base,
                        ControlConfig& cfg) {
  auto inline_tokens = config::yaml_strings(root, "poolTokens", "");
  if (!inline_tokens) return std::unexpected(inline_tokens.error());
  for (const auto& t : *inline_tokens) {
    if (trim(t).empty()) return fail(errc::kConfigInvalid, "poolTokens: empty token");
    cfg.pool_tokens.push_back(SecretBytes::from_string(trim(t)));
  }
  auto file = config::yaml_string(root, "poolTokenFile", "", "");
  if (!file) return std::unexpected(file.error());
  if (!file->empty()) {
    auto lines = token_lines(resolve(base, *file), "poolTokenFile");
    if (!lines) return std::unexpected(lines.error());
    for (const auto& t : *lines) cfg.pool_tokens.push_back(SecretBytes::from_string(t));
  }
  if (cfg.pool_tokens.empty())
    return fail(errc::kConfigInvalid,
                "poolTokens: at least one pool token is required (poolTokens or poolTokenFile)");
  return {};
}

// What unauthenticated and authenticated clients together may hold at once.
Status load_limits(const YAML::Node& root, ControlConfig& cfg) {
  auto connections = config::yaml_int(root, "maxConnections", "", 256, 8, 65536);
  if (!connections) return std::unexpected(connections.error());
  auto per_client = config::yaml_int(root, "maxConnectionsPerClient", "", 64, 1, 65536);
  if (!per_client) return std::unexpected(per_client.error());
  auto header_timeout = config::yaml_int(root, "headerTimeoutSeconds", "", 10, 1, 300);
  if (!header_timeout) return std::unexpected(header_timeout.error());
  // At least one artifact (256 MiB) must fit, or no upload could ever succeed.
  auto temp_mib = config::yaml_int(root, "maxTempMiB", "", 2048, 256, 1 << 20);
  if (!temp_mib) return std::unexpected(temp_mib.error());
  cfg.max_connections = static_cast<std::size_t>(*connections);
  cfg.max_connections_per_client = static_cast<std::size_t>(*per_client);
  cfg.header_timeout_seconds = *header_timeout;
  cfg.max_temp_bytes = static_cast<std::uint64_t>(*temp_mib) << 20;
  return {};
}

// store: {driver, url, passwordFile}. The URL must be one libpq can parse (check_postgres_url,
// never quoting it); whether the server answers is learnt when serve connects.
Status load_store(const YAML::Node& root, const std::filesystem::path& base, ControlConfig& cfg) {
  const YAML::Node store = root["store"];
  if (!store) return {};
  TAKOSUMI_TRY(config::yaml_known_keys(store, {"driver", "url", "passwordFile"}, "store"));
  auto driver = config::yaml_string(store, "driver", "store", "sqlite");
  auto url = config::yaml_string(store, "url", "store", "");
  auto password_file = config::yaml_string(store, "passwordFile", "store", "");
  if (const Error* e = first_error(driver, url, password_file)) return std::unexpected(*e);
  if (*driver == "sqlite") {
    if (!url->empty() || !password_file->empty())
      return fail(errc::kConfigInvalid, "store.url and store.passwordFile are for store.driver "
                                        "postgres; sqlite keeps its file in dataDir");
    return {};
  }
  if (*driver != "postgres")
    return fail(errc::kConfigInvalid,
                "store.driver must be sqlite or postgres, not \"" + *driver + "\"");
  if (!url->starts_with("postgresql://") && !url->starts_with("postgres://"))
    return fail(errc::kConfigInvalid, "store.url must be a postgresql:// URI (e.g. "
                                      "postgresql://takosumi@db.example:5432/takosumi?sslmode="
                                      "verify-full) when store.driver is postgres");
  TAKOSUMI_TRY(check_postgres_url(*url));
  cfg.store_driver = StoreDriver::postgres;
  cfg.postgres.url = *url;
  if (!password_file->empty()) cfg.postgres.password_file = resolve(base, *password_file);
  return {};
}

// tls: {certFile, keyFile, clientCaFile}; the files are read when the server starts (and again on
// SIGHUP), not here, so `check-config` and a reload judge them the same way.
Status load_tls(const YAML::Node& root, const std::filesystem::path& base, ControlConfig& cfg) {
  auto insecure = config::yaml_bool(root, "allowInsecureHttp", "", false);
  if (!insecure) return std::unexpected(insecure.error());
  cfg.allow_insecure_http = *insecure;
  const YAML::Node tls = root["tls"];
  if (!tls) return {};
  TAKOSUMI_TRY(config::yaml_known_keys(tls, {"certFile", "keyFile", "clientCaFile"}, "tls"));
  auto cert = config::yaml_string(tls, "certFile", "tls", "");
  auto key = config::yaml_string(tls, "keyFile", "tls", "");
  auto client_ca = config::yaml_string(tls, "clientCaFile", "tls", "");
  if (const Error* e = first_error(cert, key, client_ca)) return std::unexpected(*e);
  if (cert->empty() || key->empty())
    return fail(errc::kConfigInvalid, "tls.certFile and tls.keyFile are both required for https");
  cfg.tls = net::TlsServerFiles{resolve(base, *cert), resolve(base, *key),
                                client_ca->empty() ? std::filesystem::path()
                                                   : resolve(base, *client_ca)};
  return {};
}

Status load_sources(const YAML::Node& root, const std::filesystem::path& base, ControlConfig& cfg) {
  const YAML::Node node = root["sources"];
  if (!node || node.IsNull()) return {};
  TAKOSUMI_TRY(config::yaml_known_keys(node, {"fileRoots", "resolveTimeoutSeconds",
                                              "maxConcurrentResolutions", "maxResolutionsPerWorkspace",
                                              "fetchTimeoutSeconds", "maxFetchMiB", "caFile",
                                              "allowLoopbackHosts"},
                                       "sources"));
  auto roots = config::yaml_strings(node, "fileRoots", "sources");
  auto timeout = config::yaml_int(node, "resolveTimeoutSeconds", "sources", 30, 1, 3600);
  auto threads = config::yaml_int(node, "maxConcurrentResolutions", "sources", 8, 1, 256);
  auto per = config::yaml_int(node, "maxResolutionsPerWorkspace", "sources", 2, 1, 256);
  auto fetch = config::yaml_int(node, "fetchTimeoutSeconds", "sources", 300, 1, 86400);
  auto max = config::yaml_int(node, "maxFetchMiB", "sources", 1024, 1, 1 << 20);
  auto ca = config::yaml_string(node, "caFile", "sources", "");
  auto loopback = config::yaml_bool(node, "allowLoopbackHosts", "sources", false);
  if (const Error* e = first_error(roots, timeout, threads, per, fetch, max, ca, loopback))
    return std::unexpected(*e);
  cfg.sources.allow_loopback_hosts = *loopback;
  for (const auto& r : *roots) {
    const auto path = resolve(base, r).lexically_normal();
    if (path == "/")
      return fail(errc::kConfigInvalid, "sources.fileRoots: \"/\" would make every local directory a source");
    cfg.sources.file_roots.push_back(path);
  }
  cfg.sources.resolve_timeout_seconds = *timeout;
  cfg.sources.max_concurrent = static_cast<std::size_t>(*threads);
  cfg.sources.per_workspace = static_cast<std::size_t>(*per);
  cfg.sources.fetch_timeout_seconds = *fetch;
  cfg.sources.max_fetch_mib = static_cast<std::uint64_t>(*max);
  if (!ca->empty()) cfg.sources.ca_file = resolve(base, *ca);
  return {};
}

}  // namespace

Result<ControlConfig> parse_control_config(const YAML::Node& root,
                                           const std::filesystem::path& base_dir,
                                           const std::optional<std::string>& env_api_token) {
  TAKOSUMI_TRY(config::yaml_known_keys(
      root,
      {"listenAddress", "port", "dataDir", "apiTokenFile", "poolTokens", "poolTokenFile",
       "leaseSeconds", "manifestTtlSeconds", "maxConnections", "maxConnectionsPerClient",
       "headerTimeoutSeconds", "maxTempMiB", "tls", "allowInsecureHttp",
       "agentCredentialTtlSeconds", "metrics", "store", "sources"},
      ""));
  if (!root || !root.IsMap()) return fail(errc::kConfigInvalid, "the document must be a mapping");
  ControlConfig cfg;
  auto listen = config::yaml_string(root, "listenAddress", "", "127.0.0.1");
  auto port = config::yaml_int(root, "port", "", 0, 0, 65535);
  auto data_dir = config::yaml_string(root, "dataDir", "", "");
  auto lease = config::yaml_int(root, "leaseSeconds", "", 60, 1, 3600);
  auto ttl = config::yaml_int(root, "manifestTtlSeconds", "", 900, 0, 86400);
  auto credential_ttl =
      config::yaml_int(root, "agentCredentialTtlSeconds", "", 86400, 2, 30 * 86400);
  if (const Error* e = first_error(listen, port, data_dir, lease, ttl, credential_ttl))
    return std::unexpected(*e);
  if (data_dir->empty()) return fail(errc::kConfigInvalid, "dataDir is required");
  if (listen->empty()) return fail(errc::kConfigInvalid, "listenAddress must not be empty");
  cfg.listen_address = *listen;
  cfg.port = static_cast<std::uint16_t>(*port);
  cfg.data_dir = resolve(base_dir, *data_dir).lexically_normal();
  cfg.lease_seconds = *lease;
  cfg.manifest_ttl_seconds = *ttl;
  cfg.agent_credential_ttl_seconds = *credential_ttl;
  TAKOSUMI_TRY(load_limits(root, cfg));
  TAKOSUMI_TRY(load_tls(root, base_dir, cfg));
  TAKOSUMI_TRY(load_store(root, base_dir, cfg));
  TAKOSUMI_TRY(load_sources(root, base_dir, cfg));
  TAKOSUMI_TRY(config::load_metrics(root, std::string(kDefaultMetricsListen), cfg.metrics));
  TAKOSUMI_TRY(net::check_plain_http(cfg.tls.has_value(), cfg.listen_address,
                                     cfg.allow_insecure_http, "listenAddress",
                                     "allowInsecureHttp"));
  TAKOSUMI_TRY(load_api_token(root, base_dir, env_api_token, cfg));
  TAKOSUMI_TRY(load_pool_tokens(root, base_dir, cfg));
  return cfg;
}

Result<ControlConfig> load_control_config(const std::filesystem::path& file,
                                          const std::optional<std::string>& env_api_token) {
  auto root = config::yaml_load_file(file.string());
  if (!root) return std::unexpected(root.error());
  auto base = std::filesystem::absolute(file).parent_path();
  return with_context(parse_control_config(*root, base, env_api_token), file.string());
}

}  // namespace takosumi::controlplane
