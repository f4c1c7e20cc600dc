#include "config/agent_config_reload.hpp"

#include <utility>

namespace takosumi::config {
namespace {

// A restart-only setting: kept as it runs, named when the file changed it.
template <typename T>
void keep(const T& running, const T& fresh, const char* key, std::vector<std::string>& pending) {
  if (!(running == fresh)) pending.emplace_back(key);
}

bool same_tls(const net::TlsClientFiles& a, const net::TlsClientFiles& b) {
  return a.ca_file == b.ca_file && a.cert_file == b.cert_file && a.key_file == b.key_file;
}

}  // namespace

std::vector<std::string> apply_reload(AgentConfig& running, AgentConfig fresh) {
  std::vector<std::string> pending;
  keep(running.control_urls, fresh.control_urls, "controlPlane.url(s)", pending);
  keep(running.control_signing_key, fresh.control_signing_key,
       "controlPlane.signingPublicKeyFile", pending);
  if (!same_tls(running.control_tls, fresh.control_tls)) pending.emplace_back("controlPlane TLS files");
  keep(running.allow_insecure_http, fresh.allow_insecure_http, "controlPlane.allowInsecureHttp",
       pending);
  keep(running.name, fresh.name, "name", pending);
  keep(running.state_dir, fresh.state_dir, "stateDir", pending);
  keep(running.work_dir, fresh.work_dir, "workDir", pending);
  keep(running.tofu_binary, fresh.tofu_binary, "tofu.binary", pending);
  keep(running.supervisor, fresh.supervisor, "tofu.supervisor", pending);
  keep(running.supervisor_disabled, fresh.supervisor_disabled, "tofu.supervisor", pending);
  keep(running.sandbox.enabled, fresh.sandbox.enabled, "sandbox.mode", pending);
  keep(running.sandbox.bubblewrap, fresh.sandbox.bubblewrap, "sandbox.bubblewrap", pending);
  keep(running.sandbox.confine, fresh.sandbox.confine, "sandbox.confine", pending);
  keep(running.log_format, fresh.log_format, "logFormat", pending);
  keep(running.metrics, fresh.metrics, "metrics.listen", pending);
  keep(running.ephemeral, fresh.ephemeral, "ephemeral", pending);

  running.pool_token = std::move(fresh.pool_token);  // used at the next registration
  running.labels = std::move(fresh.labels);
  running.concurrency = fresh.concurrency;
  running.provider_mirror = std::move(fresh.provider_mirror);
  running.provider_pins = std::move(fresh.provider_pins);
  running.tofu_versions_dir = std::move(fresh.tofu_versions_dir);
  running.tofu_timeout = fresh.tofu_timeout;
  running.interrupt_grace = fresh.interrupt_grace;
  running.claim_wait = fresh.claim_wait;
  running.heartbeat_interval = fresh.heartbeat_interval;
  running.log_level = std::move(fresh.log_level);
  running.data_loss_patterns = std::move(fresh.data_loss_patterns);
  running.sandbox.network = fresh.sandbox.network;
  running.sandbox.writable_paths = std::move(fresh.sandbox.writable_paths);
  running.sandbox.exec_control_required = fresh.sandbox.exec_control_required;
  running.sandbox.exec_allow = std::move(fresh.sandbox.exec_allow);
  running.sandbox.tcp_connect_ports = std::move(fresh.sandbox.tcp_connect_ports);
  running.source = std::move(fresh.source);
  running.sandbox.allow_jit = fresh.sandbox.allow_jit;
  running.limits = fresh.limits;
  running.policy = std::move(fresh.policy);
  running.hooks = std::move(fresh.hooks);
  return pending;
}

}  // namespace takosumi::config
