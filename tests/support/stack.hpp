#pragma once
// A real takosumi-control plus takosumi-agent(s) on loopback in a fresh temporary directory, for
// integration tests. Uses the built binaries, the real OpenTofu and the provider mirror.
#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "tests/support/child_process.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/test_pki.hpp"

namespace takosumi::testing {

struct StackOptions {
  int agents = 1;
  int concurrency = 2;
  std::int64_t manifest_ttl_seconds = 900;
  // When set, agents pin this public key file instead of the control plane's real one.
  std::filesystem::path pinned_key_override;
  // Replaces the agents' default sandbox section, which keeps bubblewrap on and makes only
  // real_world() writable besides each Run's workspace.
  std::string sandbox_yaml;
  // Lines added to the default sandbox section (indented by two spaces), e.g. "  execAllow: […]\n".
  std::string sandbox_extra;
  // Appended to every agent's agent.yaml (e.g. "policy:" or "limits:" sections).
  std::string extra_agent_yaml;
  int tofu_timeout_seconds = 0;  // 0: the agent's default
  // tofu.providerMirror instead of the test mirror (which a test must never change), and
  // tofu.providerPins when set.
  std::filesystem::path provider_mirror;
  std::filesystem::path provider_pins;
  std::filesystem::path tofu_versions_dir;  // tofu.versionsDir when set
  int lease_seconds = 60;
  // HTTPS with a CA made for the stack (pki_dir()); the server's certificate names localhost
  // only (no IP address), and agents and the API client use https://localhost:<port>.
  bool https = false;
  // With https: every client must present a certificate of the stack's CA (tls.clientCaFile).
  bool mutual_tls = false;
  // Appended to control.yaml (e.g. "agentCredentialTtlSeconds: 4\n").
  std::string extra_control_yaml;
  // Added to the environment of every agent / of takosumi-control (e.g. NOTIFY_SOCKET).
  std::map<std::string, std::string> agent_env;
  std::map<std::string, std::string> control_env;
  // Added to every agent's command line (e.g. "--once").
  std::vector<std::string> agent_args;
  // Control-plane replicas on one store: only on PostgreSQL (the pg.* run). Replica 0 is the one
  // start_control()/stop_control() manage; each has its own dataDir and port and the same keys,
  // and agent-<i> lists them all in controlPlane.urls starting at replica i % replicas.
  int replicas = 1;
};

class Stack {
 public:
  explicit Stack(StackOptions options = {});
  ~Stack();

  const HttpClient& api() const { return *api_; }
  // The stack's CA (with https) and the files it wrote: ca.pem, server.pem/.key, and per client
  // <name>.pem/.key made on demand by client_certificate().
  const TestCa& ca() const { return *ca_; }
  std::filesystem::path pki_dir() const { return root_ / "pki"; }
  // Issues (once) a client certificate CN=<name> and returns its TLS files, with the CA.
  net::TlsClientFiles client_certificate(const std::string& name);
  // The controlPlane: section agent-<index> gets instead of the stack's (start_agent then uses it).
  void set_agent_control_plane(int index, std::string yaml_section);
  // The pool token agent-<index> registers with instead of the stack's (start_agent then uses it).
  void set_agent_pool_token(int index, const std::string& token);
  // SIGHUP to takosumi-control (it reloads its TLS files).
  void reload_control();
  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path data_dir() const { return root_ / "control-data"; }
  // Where test modules put the files they manage ("the real world"): writable in the sandbox.
  std::filesystem::path real_world() const { return root_ / "real-world"; }
  unsigned short port() const { return port_; }

  // Creates a workspace and a capsule from the repo; returns the capsule id.
  std::string create_capsule(const std::string& git_url, const boost::json::object& variables,
                             const boost::json::object& allowlist, const std::string& name = "app");
  // POSTs a full capsule request body to the stack's workspace; returns the capsule id.
  std::string create_capsule_from(const boost::json::object& body);
  const std::string& workspace_id() const { return workspace_id_; }
  // POST and wait until the Run leaves queued/running; returns the final Run JSON.
  boost::json::object plan(const std::string& capsule_id);
  // Applies and waits; accept_data_loss is sent as {"acceptDataLoss": …}.
  boost::json::object apply(const std::string& plan_run_id, bool accept_data_loss = false);
  // POSTs apply with {"acceptDataLoss": accept}; returns the raw answer (the Run is not awaited).
  JsonResponse post_apply(const std::string& plan_run_id, bool accept_data_loss);
  boost::json::object wait_run(const std::string& run_id,
                               std::chrono::seconds timeout = std::chrono::seconds(240));
  boost::json::array state_versions(const std::string& capsule_id);
  // Starts agent-<index> (again, after kill_agent: same name, keys, state and work directories).
  void start_agent(int index);
  void stop_agents();
  // SIGKILL, as the OOM killer or a crash would; the processes it started are left alone.
  void kill_agent(int index);
  pid_t agent_pid(int index) const;
  // Sends sig to agent-<index> (SIGHUP reloads, a second SIGTERM cancels its Runs).
  void signal_agent(int index, int sig) const;
  pid_t control_pid() const;
  // takosumi-control's metrics and health listener (metrics.listen 127.0.0.1:0 unless set).
  unsigned short metrics_port() const;
  // agent-<index>'s agent.yaml, to change before a SIGHUP.
  std::filesystem::path agent_config(int index) const { return agent_dir(index) / "agent.yaml"; }
  // Writes agent-<index>'s agent.yaml as an offline agent's (docs/air-gapped.md): no control-plane
  // URL and no pool token, the rest as start_agent's; for `takosumi-agent run-bundle execute`.
  std::filesystem::path offline_agent_config(int index);
  // Waits for agent-<index> to exit on its own (e.g. refused registration) and forgets it; returns
  // its exit status, or -1 (still running) after timeout.
  int wait_agent_exit(int index, std::chrono::seconds timeout);
  std::filesystem::path agent_dir(int index) const;
  // Stops takosumi-control (SIGKILL when hard) and starts it again on the same port and data.
  void stop_control(bool hard);
  void start_control();
  // Replica i (1 ≤ i < replicas; 0 is stop_control/start_control's): SIGKILL, start again (same
  // port and dataDir), its port and log.
  void kill_replica(int index);
  void start_replica(int index);
  unsigned short replica_port(int index) const;
  std::string replica_log(int index) const;
  // api() talks to replica `index` from now on.
  void use_replica_for_api(int index);
  // The plaintext of a stored StateVersion, decrypted with the control plane's storage key.
  std::string state_plaintext(const std::string& ciphertext_sha256) const;
  // The public API's answer for a Capsule.
  boost::json::object capsule(const std::string& capsule_id);
  // Every body the public API answers about the stack's workspace, these Connections and these
  // Capsules (their StateVersions, Runs and logs included), concatenated: what a search for a
  // leaked secret must cover.
  std::string public_surface(const std::vector<std::string>& capsules,
                             const std::vector<std::string>& connections);
  std::string agent_logs() const;
  // agent-<index>'s log alone (every start of it appends).
  std::string agent_log(int index) const;
  std::string control_log() const;

 private:
  StackOptions options_;
  std::filesystem::path root_;
  std::string store_yaml_;  // the control plane's `store:` section; empty: SQLite in dataDir
  std::string api_token_ = "test-api-token-0123456789";
  std::string pool_token_ = "test-pool-token-0123456789";
  unsigned short port_ = 0;
  std::unique_ptr<ChildProcess> control_;
  std::map<int, std::unique_ptr<ChildProcess>> replicas_;  // 1 … replicas-1
  std::map<int, unsigned short> replica_ports_;
  std::vector<std::unique_ptr<ChildProcess>> agents_;
  std::unique_ptr<HttpClient> api_;
  std::string workspace_id_;
  std::unique_ptr<TestCa> ca_;
  std::map<int, std::string> agent_control_planes_;
  std::string control_plane_section(int index);
  std::filesystem::path write_agent_config(int index, bool offline);
  std::string control_yaml(const std::filesystem::path& data_dir, unsigned short port) const;
  std::filesystem::path replica_dir(int index) const;
  // Starts takosumi-control with this configuration; returns its port (0 when it did not start).
  unsigned short launch_control(std::unique_ptr<ChildProcess>& process,
                                const std::filesystem::path& config,
                                const std::filesystem::path& data_dir,
                                const std::filesystem::path& log);
};

// The example module used by integration tests: a file resource, a generated password exposed only
// as a sensitive output (and written to out_dir/db.password so tests know the plaintext), two
// outputs meant to be mapped and one meant to stay unmapped.
std::string example_module(const std::string& greeting);

// A module whose apply creates one resource, then sleeps in a second for five minutes
// (hashicorp/time): an apply surely in progress, with state already changed, for a test to
// interrupt.
std::string slow_apply_module();

// The string field key of o, or "" when absent or not a string.
std::string str(const boost::json::object& o, const char* key);
// failure.code of a Run, or "" when the Run has no failure.
std::string failure_code(const boost::json::object& run);

// Recursively searches every regular file under dir for needle; returns the files that contain it.
std::vector<std::filesystem::path> files_containing(const std::filesystem::path& dir,
                                                    const std::string& needle);

}  // namespace takosumi::testing
