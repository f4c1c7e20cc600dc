#pragma once
// Executes one claimed job from manifest check to acknowledged completion: verify the signed
// manifest, fetch and unseal the artifacts it names, run it (runner::RunExecutor) while renewing
// the lease and streaming logs, upload the encrypted results and complete. A lost lease stops the
// Run and posts nothing that could fork history; the encrypted results stay in the outbox.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "agent/control_client.hpp"
#include "agent/redacting_sink.hpp"
#include "crypto/keys.hpp"
#include "crypto/manifest_signer.hpp"
#include "runner/run_executor.hpp"

namespace takosumi::agent {

struct SessionContext {
  ControlClient& client;
  crypto::ManifestVerifier& verifier;
  const crypto::BoxKeyPair& box_key;
  boost::asio::thread_pool& blocking;
  runner::RunnerSettings settings;
  std::chrono::seconds heartbeat_interval{10};
};

class RunSession {
 public:
  RunSession(SessionContext ctx, ClaimedJob job);
  boost::asio::awaitable<void> async_execute();

 private:
  boost::asio::awaitable<Result<runner::RunInputs>> async_prepare(const protocol::JobManifest& m);
  boost::asio::awaitable<void> async_heartbeat_loop(runner::RunExecutor& executor,
                                                    std::shared_ptr<bool> done);
  boost::asio::awaitable<Status> async_deliver(runner::RunOutcome& outcome);
  boost::asio::awaitable<void> async_report_failure(std::int64_t attempt, const Error& error);

  SessionContext ctx_;
  ClaimedJob job_;
  std::filesystem::path inbox_;
  bool lease_lost_ = false;
  std::optional<boost::asio::steady_timer> heartbeat_timer_;
  // Every secret of this Run; registered so the agent's own log lines are redacted with it too.
  std::shared_ptr<runner::SecretSet> secret_set_ = std::make_shared<runner::SecretSet>();
  SecretRegistration secret_registration_{secret_set_};
};

}  // namespace takosumi::agent
