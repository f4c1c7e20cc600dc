#pragma once
// takosumi-control's YAML configuration. Keys (camelCase):
//   listenAddress (default 127.0.0.1), port (default 0 = ephemeral), dataDir (required; relative
//   paths are resolved against the config file's directory), apiTokenFile (the API token comes
//   from env TAKOSUMI_DEPLOY_CONTROL_TOKEN first, else this file), poolTokens (list) and/or
//   poolTokenFile (one token per line, '#' comments), leaseSeconds (60), manifestTtlSeconds
//   (900; 0 makes every manifest expire at once, for tests of the agent's refusal),
//   maxConnections (256: connections open at once), maxConnectionsPerClient (64: from one IP
//   address; past either, the oldest unauthenticated connection still waiting for headers is
//   closed for the new one, else the new one is closed), headerTimeoutSeconds (10: for a
//   request's headers to arrive), maxTempMiB (2048: request bodies streamed to <dataDir>/tmp at
//   once, across all requests), tls ({certFile, keyFile, clientCaFile}: HTTPS, and with
//   clientCaFile mutual TLS; reloaded on SIGHUP), allowInsecureHttp (false: plain HTTP is served
//   only on a loopback listenAddress), agentCredentialTtlSeconds (86400: an agent token's
//   lifetime; the agent's heartbeat gets a new one after half of it), store ({driver: sqlite |
//   postgres, url, passwordFile}: where the control plane keeps its records; sqlite (the default)
//   is <dataDir>/control.db, postgres needs url, a libpq URI postgresql://user@host:port/db?
//   sslmode=verify-full (PGPASSFILE and the other PG* variables apply), and may read the password
//   from passwordFile), sources ({fileRoots: [dir…] (file:// sources only beneath these; none by
//   default), resolveTimeoutSeconds (30), maxConcurrentResolutions (8), maxResolutionsPerWorkspace
//   (2), fetchTimeoutSeconds (300) and maxFetchMiB (1024) for offline bundles' sources, caFile}).
// Errors are config_invalid and name the key; unknown keys are refused.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "config/service_settings.hpp"
#include "controlplane/store/db/database.hpp"
#include "net/tls_context.hpp"

namespace takosumi::controlplane {

inline constexpr const char* kApiTokenEnv = "TAKOSUMI_DEPLOY_CONTROL_TOKEN";
// Where takosumi-control serves /metrics and /health/* unless metrics.listen says otherwise.
inline constexpr std::string_view kDefaultMetricsListen = "127.0.0.1:9465";

struct ControlConfig {
  std::string listen_address = "127.0.0.1";
  std::uint16_t port = 0;
  std::filesystem::path data_dir;
  StoreDriver store_driver = StoreDriver::sqlite;
  PostgresSettings postgres;  // store_driver postgres
  SecretBytes api_token;
  std::vector<SecretBytes> pool_tokens;
  std::int64_t lease_seconds = 60;
  std::int64_t manifest_ttl_seconds = 900;
  // How long an agent's credential is valid; its heartbeat replaces it after half of that.
  std::int64_t agent_credential_ttl_seconds = 86400;
  std::size_t max_connections = 256;
  std::size_t max_connections_per_client = 64;
  std::int64_t header_timeout_seconds = 10;
  std::uint64_t max_temp_bytes = 2048ull << 20;
  std::optional<net::TlsServerFiles> tls;  // none: plain HTTP
  bool allow_insecure_http = false;
  // Prometheus metrics and health (metrics.listen); on by default, on loopback.
  config::MetricsConfig metrics{std::string(kDefaultMetricsListen)};
  // The program run as the Git helper (git/remote_helper.hpp): takosumi-control itself; tests
  // that embed the control plane name a helper program instead. Not a YAML key.
  std::filesystem::path git_helper = "/proc/self/exe";
  // Capsules' sources: which are allowed and how the control plane reaches them.
  struct Sources {
    std::vector<std::filesystem::path> file_roots;
    std::int64_t resolve_timeout_seconds = 30;
    std::size_t max_concurrent = 8;
    std::size_t per_workspace = 2;
    std::int64_t fetch_timeout_seconds = 300;
    std::uint64_t max_fetch_mib = 1024;
    std::filesystem::path ca_file;
    bool allow_loopback_hosts = false;  // a Git server on this machine (tests, single hosts)
  } sources;
};

// env_api_token: the value of TAKOSUMI_DEPLOY_CONTROL_TOKEN when set (passed in, not read here).
Result<ControlConfig> parse_control_config(const YAML::Node& root,
                                           const std::filesystem::path& base_dir,
                                           const std::optional<std::string>& env_api_token);
Result<ControlConfig> load_control_config(const std::filesystem::path& file,
                                          const std::optional<std::string>& env_api_token);

}  // namespace takosumi::controlplane
