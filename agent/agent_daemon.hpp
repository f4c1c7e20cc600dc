#pragma once
// The agent's main loop: register (a signed challenge proves it holds its signing key), finish or report every Run the journal holds from before a
// crash (agent/durable/run_recovery.hpp), then long-poll for as many jobs as there are free slots and run
// each in its own RunSession. request_stop() (the first stop signal) stops claiming at once, lets
// the running Runs finish and deliver, then async_run returns; cancel_running() (the second)
// interrupts them as a cancel would. Tells the service manager how it is doing throughout
// (service/service_notifier.hpp).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>

#include "agent/durable/agent_credential_file.hpp"
#include "agent/service/agent_metrics.hpp"
#include "agent/session/control_client.hpp"
#include "agent/durable/nonce_journal.hpp"
#include "agent/durable/run_journal.hpp"
#include "agent/durable/run_recovery.hpp"
#include "agent/durable/run_spool.hpp"
#include "agent/service/sandbox_probe.hpp"
#include "runner/run_executor.hpp"
#include "common/clock.hpp"
#include "config/agent_config.hpp"
#include "crypto/keys.hpp"
#include "protocol/signed_manifest.hpp"
#include "service/service_notifier.hpp"

namespace takosumi::agent {

class RunSession;

struct AgentKeys {
  crypto::BoxKeyPair box;
  crypto::SignKeyPair sign;
  crypto::SignPublicKey control_signing;  // pinned
};

// The exit status of an agent an operator revoked (systemd: RestartPreventExitStatus=3).
inline constexpr int kExitRevoked = 3;

class AgentDaemon {
 public:
  // sandbox: what probe_sandbox(true) found on this host.
  AgentDaemon(boost::asio::any_io_executor ex, config::AgentConfig config, AgentKeys keys,
              HttpTransport& transport, const Clock& clock, SandboxProbe sandbox,
              service::ServiceNotifier& notifier);
  ~AgentDaemon();
  // Returns 0 after a graceful stop (and, ephemeral, after its one Run and deregistering),
  // kExitRevoked after an operator revoked the agent, 1 when registration failed for good (a
  // refused key, signature or TLS certificate is logged with what the operator must do and not
  // retried).
  boost::asio::awaitable<int> async_run();
  // `takosumi-agent recover --push`: registers, recovers every journaled Run (also those held for
  // the operator) and returns 0 when all were delivered.
  boost::asio::awaitable<int> async_push_recovery();
  void request_stop();
  void cancel_running();
  // SIGHUP: fresh is the file loaded again (helpers resolved). Refused (logged, the running
  // configuration stays) when it is an error; otherwise config::apply_reload's settings take
  // effect for the next claim and the next Run, and new labels or concurrency are announced.
  void reload(Result<config::AgentConfig> fresh);
  // For /health/ready: nullopt when the agent takes work; otherwise why not (before its recovery
  // finished, draining, or the control plane away longer than kUnreachableNotReady).
  std::optional<std::string> not_ready() const;
  AgentMetrics& metrics() { return metrics_; }
  // Brings the gauges read on demand (spool bytes) up to date before a scrape.
  void refresh_metrics();
  static constexpr std::int64_t kUnreachableNotReady = 60;  // seconds

 private:
  boost::asio::awaitable<Result<std::string>> async_register_once(const SecretBytes& secret);
  boost::asio::awaitable<Result<std::string>> async_register_with_best_secret();  // the agent id
  boost::asio::awaitable<Status> async_register();  // one at a time (registering_)
  boost::asio::awaitable<Status> async_register_until_done();
  boost::asio::awaitable<void> async_presence_loop();
  void revoked(const Error& e);
  Status prepare_directories();
  // Directories, journal and registration; false (logged) when the agent cannot go on.
  boost::asio::awaitable<bool> async_start();
  boost::asio::awaitable<RecoverySummary> async_recover_journal(bool include_held);
  boost::asio::awaitable<void> async_claim_loop();
  boost::asio::awaitable<void> async_session(ClaimedJob job);  // the Run, then the memory it freed
  boost::asio::awaitable<void> async_run_session(ClaimedJob job);
  boost::asio::awaitable<void> async_deregister();
  bool holds_results_for_operator() const;
  void update_status();
  void reachable(bool ok);
  runner::RunnerSettings runner_settings() const;
  RunServices run_services() { return {client_, *journal_, spool_, clock_, blocking_}; }
  // Waits d, or less when a slot frees up or stop is requested.
  boost::asio::awaitable<void> async_wait_slot(std::chrono::steady_clock::duration d);
  boost::asio::awaitable<void> async_wait_stop();

  boost::asio::any_io_executor ex_;
  config::AgentConfig config_;
  AgentKeys keys_;
  SandboxProbe sandbox_;
  // `tofu version` once per binary for all Runs, not per Run.
  std::shared_ptr<runner::PackageHashCache> package_hashes_ =
      std::make_shared<runner::PackageHashCache>();
  std::shared_ptr<runner::TofuVersionCache> tofu_versions_ =
      std::make_shared<runner::TofuVersionCache>();
  ControlClient client_;
  const Clock& clock_;
  boost::asio::thread_pool blocking_{2};
  std::optional<NonceJournal> nonces_;  // accepted manifest nonces, kept across restarts
  std::optional<protocol::ManifestVerifier> verifier_;
  std::optional<RunJournal> journal_;
  RunSpool spool_;
  AgentCredentialFile credentials_;
  std::string agent_id_;
  std::optional<boost::asio::steady_timer> presence_timer_;
  bool finished_ = false;
  bool revoked_ = false;
  bool unregistered_ = false;  // registering again failed for good
  boost::asio::steady_timer stop_timer_;  // never expires; cancelled by request_stop()
  boost::asio::steady_timer slot_timer_;  // cancelled when a slot frees up or on stop
  boost::asio::steady_timer register_timer_;  // registration's backoff; cancelled on stop
  std::int64_t active_ = 0;
  bool stopping_ = false;
  service::ServiceNotifier& notifier_;
  std::set<RunSession*> sessions_;
  std::optional<std::int64_t> unreachable_since_;  // the first failed claim of an outage
  std::int64_t claimed_ = 0;  // Runs taken since start (ephemeral: at most one)
  bool ready_ = false;        // registered and recovered
  bool registering_ = false;
  bool announce_again_ = false;  // a reload changed labels or concurrency mid-registration
  AgentMetrics metrics_;
};

}  // namespace takosumi::agent
