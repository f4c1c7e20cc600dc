#include "agent/session/run_session.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "agent/session/log_streamer.hpp"
#include "agent/service/redacting_sink.hpp"
#include "agent/session/retry.hpp"
#include "runner/host.hpp"
#include "agent/session/run_delivery.hpp"
#include "agent/service/run_log_context.hpp"
#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "crypto/sealed_box.hpp"
#include "crypto/sha256.hpp"
#include "protocol/failure_codes.hpp"

namespace takosumi::agent {
namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

Result<SecretBytes> unseal(const std::string& sealed_b64, const crypto::BoxKeyPair& key,
                           std::string_view what) {
  auto sealed = base64_decode(sealed_b64);
  if (!sealed) return fail(errc::kManifestInvalid, std::string(what) + ": sealed DEK is not base64");
  auto dek = crypto::open_sealed(*sealed, key);
  if (!dek)
    return fail(errc::kStateIntegrityFailed,
                std::string(what) + ": cannot open the sealed DEK: " + dek.error().message);
  return dek;
}

// The Run's Connections and sensitive variables, sealed to this agent inside the signed manifest.
Result<protocol::SecretBundle> open_secrets(const std::string& sealed_b64,
                                            const crypto::BoxKeyPair& key) {
  if (sealed_b64.empty()) return protocol::SecretBundle{};
  auto sealed = base64_decode(sealed_b64);
  if (!sealed) return fail(errc::kManifestInvalid, "secrets: not base64");
  auto plain = crypto::open_sealed(*sealed, key);
  if (!plain)
    return fail(errc::kManifestInvalid,
                "secrets: not sealed to this agent's key: " + plain.error().message);
  return protocol::parse_secret_bundle(plain->reveal_as_string());
}

}  // namespace

RunSession::RunSession(SessionContext ctx, ClaimedJob job)
    : ctx_(std::move(ctx)), job_(std::move(job)) {}

RunSession::~RunSession() { RunLogContext::instance().erase(job_.run_id); }

void RunSession::cancel() {
  if (cancel_requested_) return;
  cancel_requested_ = true;
  spdlog::info("run {}: cancelled by the agent's stop", job_.run_id);
  if (executor_ != nullptr) executor_->cancel();
}

asio::awaitable<void> RunSession::async_report_failure(std::int64_t attempt, const Error& error) {
  protocol::RunReport report;
  report.lease_token = job_.lease_token;
  report.attempt = attempt;
  report.status = "failed";
  report.failure_code = error.code;
  report.failure_message = error.message;
  const std::string body = boost::json::serialize(protocol::to_json(report));
  auto done = co_await async_retry([&] { return ctx_.client.async_complete(job_.run_id, body); }, 0);
  if (!done) spdlog::error("run {}: completion refused: {}", job_.run_id, done.error().to_string());
}

asio::awaitable<Result<runner::RunInputs>> RunSession::async_prepare(const protocol::JobManifest& m) {
  runner::RunInputs in;
  in.manifest = m;
  in.outbox = outbox_;
  auto secrets = open_secrets(m.sealed_secrets, ctx_.box_key);
  if (!secrets) co_return std::unexpected(secrets.error());
  in.secrets = std::move(*secrets);
  in.secret_set = secret_set_;
  TAKOSUMI_CO_TRY(ensure_directory(inbox_));
  // An envelope of the Run (its prior state, its saved plan): the data key unsealed with the
  // agent's box key, the ciphertext downloaded into the inbox.
  auto fetch = [&](const std::string& sealed_dek, const char* what, const char* kind,
                   std::optional<std::filesystem::path>& envelope,
                   SecretBytes& dek) -> asio::awaitable<Status> {
    auto opened = unseal(sealed_dek, ctx_.box_key, what);
    if (!opened) co_return std::unexpected(opened.error());
    auto path = inbox_ / (std::string(kind) + ".env");
    auto s = co_await async_retry(
        [&] { return ctx_.client.async_download(job_.run_id, kind, job_.lease_token, path); }, 8);
    if (!s) co_return fail(errc::kArtifactTransferFailed, "download " + std::string(kind) + ": " + s.error().message);
    envelope = path;
    dek = std::move(*opened);
    co_return Status{};
  };
  // An offline Run's source came in its bundle; checked against the manifest at checkout.
  if (!m.source.pack_sha256.empty()) {
    auto path = inbox_ / "source.pack";
    auto s = co_await async_retry(
        [&] { return ctx_.client.async_download(job_.run_id, "source", job_.lease_token, path); }, 8);
    if (!s) co_return fail(errc::kArtifactTransferFailed, "the source pack: " + s.error().message);
    in.source_pack = path;
  }
  if (m.prior_state)
    TAKOSUMI_CO_TRY(co_await fetch(m.prior_state->sealed_dek, "priorState", "prior_state",
                                   in.prior_state_envelope, in.prior_state_dek));
  if (m.saved_plan)
    TAKOSUMI_CO_TRY(co_await fetch(m.saved_plan->sealed_dek, "savedPlan", "plan", in.plan_envelope,
                                   in.plan_dek));
  co_return in;
}

asio::awaitable<void> RunSession::async_heartbeat_loop(std::shared_ptr<bool> done) {
  heartbeat_timer_.emplace(co_await asio::this_coro::executor);
  bool cancel_sent = false;
  while (!*done) {
    heartbeat_timer_->expires_after(ctx_.heartbeat_interval);
    co_await heartbeat_timer_->async_wait(asio::as_tuple(asio::use_awaitable));
    if (*done) co_return;
    auto answer = co_await ctx_.client.async_heartbeat(job_.run_id, job_.lease_token);
    if (*done) co_return;
    if (!answer) {
      // A revoked agent's leases ended with the revocation.
      if (answer.error().code == errc::kLeaseLost || answer.error().code == errc::kAgentRevoked) {
        if (delivering_) {
          // The completion decides now (the control plane may have just accepted it).
          spdlog::info("run {}: the lease ended while the results were delivered ({})", job_.run_id,
                       answer.error().code);
          co_return;
        }
        spdlog::error("run {}: lease lost ({}); stopping the run", job_.run_id, answer.error().code);
        lease_lost_ = true;
        if (executor_) executor_->cancel();
        co_return;
      }
      spdlog::warn("run {}: heartbeat failed: {}", job_.run_id, answer.error().to_string());
      continue;
    }
    if (answer->cancel_requested && !cancel_sent && !delivering_) {
      spdlog::info("run {}: cancel requested by the control plane", job_.run_id);
      cancel_sent = true;
      // Before tofu starts (downloads), the executor takes it when it is made.
      cancel_requested_ = true;
      if (executor_) executor_->cancel();
    }
  }
}

Status RunSession::journal(RunPhase phase, std::string note) {
  RunLogContext::instance().set(job_.run_id, {entry_.attempt, std::string(to_string(phase))});
  return ctx_.journal.advance(entry_, phase, std::move(note), ctx_.clock.now_unix());
}

// Journaled first, then announced: if the agent dies in between, recovery finds the phase and
// reports the Run interrupted, and the control plane, never told, may give the Run to another
// agent — nothing was applied. The control plane refuses the announcement under a stale lease, so
// an agent that lost its lease never starts an apply.
asio::awaitable<Status> RunSession::async_before_apply() {
  if (auto kept = journal(RunPhase::apply); !kept)
    co_return fail(errc::kWorkspaceFailed,
                   "the run journal cannot be written (" + kept.error().to_string() +
                       "); nothing was applied");
  auto told = co_await async_retry(
      [&] { return ctx_.client.async_start_apply(job_.run_id, job_.lease_token, entry_.attempt); },
      8);
  if (told && *told)
    co_return fail(errc::kCancelled, "cancel requested before the apply started; nothing was applied");
  if (told) co_return Status{};
  if (told.error().code == errc::kLeaseLost) {
    lease_lost_ = true;
    co_return fail(errc::kLeaseLost, "the control plane gave the Run to another agent; nothing was applied");
  }
  co_return fail(errc::kUnavailable, "the control plane could not be told that the apply starts (" +
                                         told.error().to_string() + "); nothing was applied");
}

asio::awaitable<void> RunSession::async_execute() {
  std::optional<runner::PhaseTimer> verifying(std::in_place, agent_millis_, "agent.manifest");
  auto manifest = ctx_.verifier.verify(job_.manifest);
  verifying.reset();
  // The job's run id and lease came beside the signed manifest: they must be the manifest's.
  if (manifest && manifest->run_id != job_.run_id)
    manifest = fail(errc::kManifestInvalid, "the manifest is for run " + manifest->run_id +
                                                ", not for run " + job_.run_id);
  if (manifest && !manifest->lease_sha256.empty() &&
      crypto::sha256_hex(job_.lease_token) != manifest->lease_sha256)
    manifest = fail(errc::kManifestInvalid, "the lease token is not the one the manifest names");
  if (!manifest) {
    // Nothing from this manifest is used; the refusal is reported under the claim's lease.
    spdlog::error("run {}: manifest refused: {}", job_.run_id, manifest.error().to_string());
    // Named: g++ 12 mishandles a non-trivial temporary inside a co_await expression.
    const Error refusal = protocol::as_run_failure(manifest.error(), errc::kManifestInvalid);
    co_await async_report_failure(0, refusal);
    co_return;
  }
  spdlog::info("run {}: {} of capsule {} (attempt {})", job_.run_id,
               protocol::to_string(manifest->type), manifest->capsule_id, manifest->attempt);
  // From here until the delivery is acknowledged, the lease is renewed alongside.
  auto done = std::make_shared<bool>(false);
  auto work = [&]() -> asio::awaitable<void> {
    co_await async_run(*manifest);
    *done = true;
    if (heartbeat_timer_) heartbeat_timer_->cancel();
  };
  co_await (work() && async_heartbeat_loop(done));
}

asio::awaitable<void> RunSession::async_run(const protocol::JobManifest& verified) {
  const auto* manifest = &verified;
  type_ = manifest->type;
  entry_ = JournalEntry{job_.run_id, manifest->attempt, job_.lease_token, RunPhase::claimed,
                        takosumi::serialize(protocol::to_json(*manifest)), {}, 0};
  // The attempt's spool is the runner's outbox: its checkpoints and results outlive a reboot.
  outbox_ = ctx_.spool.dir(job_.run_id, manifest->attempt);
  inbox_ = outbox_ / "inbox";
  std::optional<runner::PhaseTimer> journaling(std::in_place, agent_millis_, "agent.journal");
  auto kept = journal(RunPhase::claimed);
  journaling.reset();
  if (!kept) {
    // Without the journal a crash would strand the Run: it is not started.
    spdlog::error("run {}: journal: {}", job_.run_id, kept.error().to_string());
    const Error failure{std::string(errc::kWorkspaceFailed),
                        "the agent cannot write its run journal: " + kept.error().to_string()};
    co_await async_report_failure(manifest->attempt, failure);
    co_return;
  }
  auto ex = co_await asio::this_coro::executor;
  std::optional<runner::PhaseTimer> downloading(std::in_place, agent_millis_, "agent.download");
  auto inputs = co_await async_prepare(*manifest);
  downloading.reset();
  // The lease may have ended during the downloads; then no tofu runs for a Run that is no longer
  // this agent's (the heartbeat had no executor to cancel yet).
  if (inputs && lease_lost_)
    inputs = fail(errc::kLeaseLost, "the control plane gave the Run to another agent while its "
                                    "inputs were downloaded; nothing ran");
  if (!inputs) {
    spdlog::error("run {}: {}", job_.run_id, inputs.error().to_string());
    (void)remove_tree(inbox_);
    Delivery failed;
    failed.report.status = "failed";
    // Always a Run failure code: a bare io_error or crypto_failed would reach the user as internal.
    Error failure = protocol::as_run_failure(inputs.error(), errc::kWorkspaceFailed);
    failed.report.failure_code = std::move(failure.code);
    failed.report.failure_message = std::move(failure.message);
    failed.report.source_commit = manifest->source.commit;
    co_await async_finish(std::move(failed));
    co_return;
  }
  inputs->before_apply = [this]() { return async_before_apply(); };

  runner::RunExecutor executor(ex, ctx_.blocking, ctx_.settings);
  executor_ = &executor;
  if (cancel_requested_) executor.cancel();
  LogStreamer logs(ex, ctx_.client, job_.run_id, job_.lease_token);
  std::optional<runner::RunOutcome> outcome;
  auto run = [&]() -> asio::awaitable<void> {
    runner::PhaseTimer running(agent_millis_, "agent.run");  // the runner's whole time, its phases within
    outcome = co_await executor.async_run(std::move(*inputs),
                                          [&logs](std::string_view line) { logs.append(line); },
                                          runner::RunExecutor::Release::later);
    logs.finish();
  };
  // Both end together: the Run and its live log stream.
  co_await (run() && logs.async_run());
  executor_ = nullptr;
  (void)remove_tree(inbox_);
  Delivery delivery;
  delivery.report = std::move(outcome->report);
  delivery.plan = outcome->plan_envelope;
  delivery.state = outcome->state_envelope;
  delivery.plan_view = outcome->plan_view;
  const auto tail = logs.pending();
  delivery.log_seq = tail.seq;
  delivery.log_tail = tail.text;
  if (outcome->checkpoints > 0)
    spdlog::info("run {}: {} state checkpoint(s) taken during the apply", job_.run_id,
                 outcome->checkpoints);
  // The Run's cleanup (its sandbox's end, its cgroup's and workspace's removal, about 9 ms) beside
  // the delivery, which needs none of it: the results are in the outbox.
  using namespace asio::experimental::awaitable_operators;
  co_await (async_finish(std::move(delivery)) && executor.async_release());
}

asio::awaitable<void> RunSession::async_finish(Delivery delivery) {
  for (const auto& [phase, ms] : agent_millis_) delivery.report.phase_millis[phase] += ms;
  delivery.report.lease_token = job_.lease_token;
  delivery.report.attempt = entry_.attempt;
  if (lease_lost_) {
    // Posting would fork history: the results stay in the spool for the operator.
    if (auto saved = ctx_.spool.save(job_.run_id, entry_.attempt, delivery); !saved)
      spdlog::error("run {}: spool: {}", job_.run_id, saved.error().to_string());
    (void)journal(RunPhase::lease_lost, "the control plane gave the Run to another agent");
    spdlog::error("run {}: lease_lost: results kept in {} for the operator, nothing posted "
                  "(takosumi-agent recover)",
                  job_.run_id, ctx_.spool.dir(job_.run_id, entry_.attempt).string());
    co_return;
  }
  const std::string status = delivery.report.status;
  const std::string code = delivery.report.failure_code;
  if (type_)
    ctx_.metrics.run_finished(*type_, code == errc::kCancelled ? "cancelled" : status,
                              delivery.report.phase_millis);
  const auto started = std::chrono::steady_clock::now();
  delivering_ = true;
  auto settled = co_await async_settle(ctx_, entry_,
                                       std::move(delivery));
  ctx_.metrics.observe("delivery", std::chrono::duration<double>(
                                       std::chrono::steady_clock::now() - started).count());
  if (!settled) co_return;
  spdlog::info("run {}: {}{}", job_.run_id, status, code.empty() ? "" : " (" + code + ")");
}

}  // namespace takosumi::agent
