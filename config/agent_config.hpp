#pragma once
// The agent's configuration (docs/configuration.md). Loaded from YAML; the control-plane URL, the
// pool token and the agent's name may come from the environment instead
// (TAKOSUMI_DEPLOY_CONTROL_URL, TAKOSUMI_POOL_TOKEN, TAKOSUMI_AGENT_NAME), which wins over the
// file so one file can serve a whole pool.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "config/sandbox_config.hpp"
#include "config/source_config.hpp"
#include "config/service_settings.hpp"
#include "net/tls_context.hpp"

namespace takosumi::config {

struct AgentConfig {
  // https://host:port (http:// for loopback); empty for an offline agent, which has no control
  // plane to reach and only runs Run bundles (docs/air-gapped.md).
  std::string control_url;
  // controlPlane.urls (the replicas, in the order tried; failover) or just control_url.
  std::vector<std::string> control_urls;
  std::filesystem::path control_signing_key;    // pinned Ed25519 public key file of the control plane
  // controlPlane.caFile (empty: the system trust store), clientCertFile and clientKeyFile
  // (mutual TLS; the key file must be owner-only).
  net::TlsClientFiles control_tls;
  bool allow_insecure_http = false;  // plain http to a host that is not loopback (warned)
  SecretBytes pool_token;
  std::string name;
  std::vector<std::string> labels;
  std::int64_t concurrency = 1;
  std::filesystem::path state_dir;  // keys/, git-cache/, outbox/
  std::filesystem::path work_dir;   // per-Run workspaces (tmpfs in production)
  std::filesystem::path tofu_binary;
  // tofu.versionsDir: more OpenTofu builds, <dir>/<version>/tofu; a Run with a version constraint
  // (the module's required_version, the Capsule's opentofuVersion) uses the newest that
  // satisfies it, any other Run tofu.binary. Empty: tofu.binary only.
  std::filesystem::path tofu_versions_dir;
  std::filesystem::path provider_mirror;
  // tofu.providerPins: a lock-file-format list of pinned provider hashes; when set, the mirror is
  // checked against it before every Run (docs/air-gapped.md). Empty: not checked.
  std::filesystem::path provider_pins;
  std::chrono::seconds tofu_timeout{1800};
  // takosumi-supervise, between the agent and every tofu command (docs/operations.md). Empty:
  // the one next to the takosumi-agent executable (resolved by main). "none" in the file: no
  // supervisor, so tofu dies with the agent.
  std::filesystem::path supervisor;
  bool supervisor_disabled = false;
  // After an interrupt (cancel, timeout, lost lease, the agent's death), how long tofu has to
  // persist its state and stop before it is killed.
  std::chrono::seconds interrupt_grace{30};
  std::chrono::seconds claim_wait{20};
  std::chrono::seconds heartbeat_interval{10};
  std::string log_level = "info";
  LogFormat log_format = LogFormat::text;
  // Take one Run, deliver it, deregister and exit (one agent per job in autoscaled pools).
  bool ephemeral = false;
  HooksConfig hooks;
  MetricsConfig metrics;  // off unless metrics.listen is set
  // Resource-type globs whose delete/replace is flagged as data loss; empty = built-in defaults.
  std::vector<std::string> data_loss_patterns;
  SandboxConfig sandbox;
  SourceConfig source;  // where Runs' sources may come from (file roots), fetch limits
  LimitsConfig limits;
  protocol::RunPolicy policy;  // the pool's side; network comes from sandbox.network
};

// Environment variables the loader may read, passed in so tests control them.
using Environment = std::map<std::string, std::string>;
Environment process_environment(const std::vector<std::string>& names);

// Loads and validates; relative paths are resolved against the config file's directory.
// Errors: config_invalid (names the key), not_found / io_error for referenced files.
Result<AgentConfig> load_agent_config(const std::filesystem::path& file, const Environment& env);

}  // namespace takosumi::config
