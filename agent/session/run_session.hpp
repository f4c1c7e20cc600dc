#pragma once
// Executes one claimed job from manifest check to acknowledged completion: verify the signed
// manifest, fetch and unseal the artifacts it names, run it (runner::RunExecutor) while renewing
// the lease and streaming logs, spool the encrypted results and deliver them. Each phase is
// journaled first (agent/durable/run_journal.hpp), and the control plane is told before `tofu apply`
// starts, so a restarted agent can finish what this one began (agent/durable/run_recovery.hpp). The lease
// is renewed from the moment the manifest is accepted until the delivery is acknowledged —
// through the downloads, the Run and the uploads — so a slow transfer never costs it. A lost
// lease stops the Run and posts nothing that could fork history; its spool is kept for the
// operator.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "agent/service/agent_metrics.hpp"
#include "agent/service/redacting_sink.hpp"
#include "agent/session/run_services.hpp"
#include "crypto/keys.hpp"
#include "protocol/signed_manifest.hpp"
#include "runner/run_executor.hpp"

namespace takosumi::agent {

struct SessionContext : RunServices {
  protocol::ManifestVerifier& verifier;
  const crypto::BoxKeyPair& box_key;
  runner::RunnerSettings settings;
  std::chrono::seconds heartbeat_interval{10};
  AgentMetrics& metrics;
};

class RunSession {
 public:
  RunSession(SessionContext ctx, ClaimedJob job);
  ~RunSession();
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;
  boost::asio::awaitable<void> async_execute();
  // The agent's own cancel (a second stop signal): as a cancel from the control plane, tofu is
  // interrupted and what it saved is delivered; the Run ends cancelled. Before tofu starts it
  // starts nothing; once the results are being delivered it changes nothing.
  void cancel();

 private:
  boost::asio::awaitable<Result<runner::RunInputs>> async_prepare(const protocol::JobManifest& m);
  // Renews the lease every heartbeat_interval until *done; a lost lease or a cancel request
  // reaches the executor while one runs (executor_).
  boost::asio::awaitable<void> async_heartbeat_loop(std::shared_ptr<bool> done);
  // The verified manifest's Run: inputs, execution, delivery.
  boost::asio::awaitable<void> async_run(const protocol::JobManifest& manifest);
  boost::asio::awaitable<Status> async_before_apply();
  boost::asio::awaitable<void> async_finish(Delivery delivery);
  boost::asio::awaitable<void> async_report_failure(std::int64_t attempt, const Error& error);
  Status journal(RunPhase phase, std::string note = {});

  SessionContext ctx_;
  ClaimedJob job_;
  JournalEntry entry_;
  std::filesystem::path outbox_;  // the attempt's spool: the runner's outbox
  std::filesystem::path inbox_;
  bool lease_lost_ = false;
  std::optional<protocol::RunType> type_;  // once the manifest is verified
  // The agent's own phases before and around the runner ("agent.manifest", "agent.journal",
  // "agent.download", "agent.run"), joined to the report's phaseMillis.
  std::map<std::string, std::int64_t> agent_millis_;
  bool cancel_requested_ = false;
  runner::RunExecutor* executor_ = nullptr;  // while tofu may run
  bool delivering_ = false;                  // the results are being delivered
  std::optional<boost::asio::steady_timer> heartbeat_timer_;
  // Every secret of this Run; registered so the agent's own log lines are redacted with it too.
  std::shared_ptr<redaction::SecretSet> secret_set_ = std::make_shared<redaction::SecretSet>();
  SecretRegistration secret_registration_{secret_set_};
};

}  // namespace takosumi::agent
