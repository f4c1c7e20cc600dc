#include "agent/agent_daemon.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <malloc.h>
#include <spdlog/spdlog.h>

#include "common/clock.hpp"
#include "agent/session/retry.hpp"
#include "agent/session/run_session.hpp"
#include "agent/service/runner_settings.hpp"
#include "git/source_cache.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/version.hpp"
#include "config/agent_config_reload.hpp"
#include "crypto/registration_proof.hpp"
#include "crypto/sha256.hpp"

namespace takosumi::agent {
namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// The control plane did not answer at all (as opposed to answering no).
bool is_outage(const Error& e) { return e.code == errc::kUnavailable || is_tls_failure(e); }

std::string describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

AgentDaemon::AgentDaemon(asio::any_io_executor ex, config::AgentConfig config, AgentKeys keys,
                         HttpTransport& transport, const Clock& clock, SandboxProbe sandbox,
                         service::ServiceNotifier& notifier)
    : ex_(ex),
      config_(std::move(config)),
      keys_(std::move(keys)),
      sandbox_(std::move(sandbox)),
      client_(transport),
      clock_(clock),
      spool_(config_.state_dir / "spool"),
      credentials_(config_.state_dir / "agent-credential"),
      stop_timer_(ex, std::chrono::steady_clock::time_point::max()),
      slot_timer_(ex),
      register_timer_(ex),
      notifier_(notifier),
      metrics_(TAKOSUMI_VERSION) {
  client_.set_observer([this](const HttpRequest& req, unsigned status) {
    const bool delivery = req.target.ends_with("/complete") || req.target.ends_with("/report") ||
                          (req.method == "PUT" && req.target.find("/artifacts/") != std::string::npos);
    metrics_.request(status, delivery);
  });
  update_status();
}

std::optional<std::string> AgentDaemon::not_ready() const {
  if (stopping_) return "draining: stopped claiming";
  if (!ready_) return "starting: registration and recovery have not finished";
  if (unreachable_since_ && clock_.now_unix() - *unreachable_since_ > kUnreachableNotReady)
    return "control plane unreachable since " + utc_timestamp(*unreachable_since_);
  return std::nullopt;
}

void AgentDaemon::refresh_metrics() {
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(spool_.root(), ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const auto size = it->file_size(size_ec);
      if (!size_ec) bytes += size;
    }
  }
  metrics_.spool_bytes(bytes);
}

AgentDaemon::~AgentDaemon() { blocking_.join(); }

void AgentDaemon::request_stop() {
  if (stopping_) return;
  spdlog::info("stop requested: no new claims; {} run(s) still running will finish "
               "(a second stop signal cancels them)", active_);
  stopping_ = true;
  stop_timer_.cancel();
  slot_timer_.cancel();
  register_timer_.cancel();
  update_status();
  notifier_.stopping();
}

void AgentDaemon::cancel_running() {
  request_stop();
  if (sessions_.empty()) return;
  spdlog::warn("second stop signal: cancelling {} running run(s); what their tofu saved is "
               "delivered", sessions_.size());
  for (RunSession* session : sessions_) session->cancel();
}

void AgentDaemon::reload(Result<config::AgentConfig> fresh) {
  notifier_.reloading();
  if (!fresh) {
    spdlog::error("SIGHUP: the configuration file was refused and the running configuration "
                  "stays: {}", fresh.error().to_string());
  } else {
    const bool announce =
        fresh->labels != config_.labels || fresh->concurrency != config_.concurrency;
    for (const auto& key : config::apply_reload(config_, std::move(*fresh)))
      spdlog::warn("SIGHUP: {} changed in the file; it takes effect at the next restart", key);
    spdlog::set_level(spdlog::level::from_str(config_.log_level));
    spdlog::info("SIGHUP: configuration reloaded (concurrency {}, log level {}); running Runs keep "
                 "the settings they started with", config_.concurrency, config_.log_level);
    slot_timer_.cancel();  // a larger concurrency claims at once
    // The control plane lists the agent's labels and slots from its registration. One
    // registration at a time: one in flight sends what config_ holds when it is sent, so a
    // reload meanwhile asks it to go once more.
    if (announce && registering_) {
      announce_again_ = true;  // the start's registration too
    } else if (announce && verifier_ && !stopping_) {
      asio::co_spawn(ex_, [this]() -> asio::awaitable<void> {
        if (auto again = co_await async_register(); !again)
          spdlog::warn("announcing the new labels and concurrency: {}", again.error().to_string());
      }, [](std::exception_ptr e) {
        if (e) spdlog::critical("bug: stray exception announcing a reload: {}", describe(e));
      });
    }
  }
  update_status();
  notifier_.reloaded();
}

void AgentDaemon::reachable(bool ok) {
  if (ok == !unreachable_since_) return;
  if (ok) {
    spdlog::info("control plane reachable again");
    unreachable_since_.reset();
  } else {
    unreachable_since_ = clock_.now_unix();
  }
  update_status();
}

// The line `systemctl status` shows.
void AgentDaemon::update_status() {
  metrics_.slots(active_, config_.concurrency);
  const std::string slots =
      std::to_string(active_) + "/" + std::to_string(config_.concurrency) + " slots";
  std::string line;
  if (stopping_)
    line = active_ == 0 ? "stopping" : "draining: " + std::to_string(active_) + " Run(s) left";
  else if (!ready_)
    line = "starting: registering with " + config_.control_url + " and recovering";
  else if (unreachable_since_)
    line = "control plane unreachable since " + utc_timestamp(*unreachable_since_) + ", " + slots;
  else if (active_ == 0)
    line = "idle, " + slots;
  else
    line = "running " + std::to_string(active_) + " Run(s), " + slots;
  notifier_.status(line);
}

asio::awaitable<void> AgentDaemon::async_wait_slot(std::chrono::steady_clock::duration d) {
  slot_timer_.expires_after(d);
  co_await slot_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> AgentDaemon::async_wait_stop() {
  if (stopping_) co_return;
  co_await stop_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
}

// Proves possession of the signing key: a fresh challenge, signed together with everything the
// registration claims (crypto/registration_proof.hpp). secret: the pool token, or the credential
// this agent kept from its last registration.
asio::awaitable<Result<std::string>> AgentDaemon::async_register_once(const SecretBytes& secret) {
  auto challenge = co_await client_.async_register_challenge(secret);
  if (!challenge) co_return std::unexpected(challenge.error());
  const crypto::RegistrationClaim claim{*challenge,
                                        config_.name,
                                        keys_.sign.public_key,
                                        keys_.box.public_key,
                                        crypto::sha256_hex(secret.reveal_as_string()),
                                        keys_.control_signing};
  const protocol::RegistrationRequest reg{
      {config_.name, TAKOSUMI_VERSION, config_.labels, config_.concurrency,
       keys_.box.public_key.to_base64(), keys_.sign.public_key.to_base64()},
      *challenge,
      crypto::sign_registration(claim, keys_.sign)};
  co_return co_await client_.async_register(reg, secret);
}

// The kept credential first (a pool token rotated away since does not strand this agent), the
// pool token when there is none or it is no longer taken.
asio::awaitable<Result<std::string>> AgentDaemon::async_register_with_best_secret() {
  auto kept = credentials_.load();
  if (!kept) co_return std::unexpected(kept.error());
  if (*kept) {
    auto id = co_await async_register_once(**kept);
    // Unknown, expired, or (a new signing key) not this credential's agent: the pool token
    // decides, and the registry says what is wrong with the key if anything is.
    const bool stale = !id && (id.error().code == errc::kUnauthorized ||
                               id.error().code == errc::kAgentCredentialExpired ||
                               id.error().code == errc::kForbidden);
    if (!stale) co_return id;
    spdlog::info("the kept agent credential was not taken ({}); registering with the pool token",
                 id.error().code);
  }
  co_return co_await async_register_once(config_.pool_token);
}

asio::awaitable<Status> AgentDaemon::async_register() {
  // Cleared however the registration ends: a flag left set would stop every later one.
  struct Registering {
    bool& flag;
    explicit Registering(bool& f) : flag(f) { flag = true; }
    ~Registering() { flag = false; }
  } registering(registering_);
  co_return co_await async_register_until_done();
}

asio::awaitable<Status> AgentDaemon::async_register_until_done() {
  for (std::uint32_t attempt = 0; !stopping_; ++attempt) {
    auto id = co_await async_register_with_best_secret();
    if (id) {
      spdlog::info("registered with {} as agent {}", config_.control_url, *id);
      agent_id_ = *id;
      // Kept first: the registration retired the credential kept before.
      if (auto kept = credentials_.store(client_.agent_token()); !kept)
        spdlog::warn("cannot keep the agent credential: {}", kept.error().to_string());
      if (announce_again_) {  // a reload changed what this one announced: once more
        announce_again_ = false;
        attempt = 0;
        continue;
      }
      if (verifier_) co_return Status{};  // registered again after an expired credential
      auto journal = NonceJournal::open(config_.state_dir / "nonces", clock_.now_unix());
      if (!journal) co_return std::unexpected(journal.error());
      nonces_.emplace(std::move(*journal));
      verifier_.emplace(keys_.control_signing, *id, clock_);
      for (const auto& [nonce, expires] : nonces_->entries()) verifier_->remember(nonce, expires);
      verifier_->set_recorder([this](const std::string& nonce, std::int64_t expires) {
        return nonces_->record(nonce, expires, clock_.now_unix());
      });
      co_return Status{};
    }
    // A challenge that was used up or expired on the way is fixed by fetching another; a refused
    // key, signature or certificate is not, and the operator has to act (the message says how).
    const Error& e = id.error();
    if (is_tls_failure(e) || e.code == errc::kUnauthorized ||
        (!is_retryable(e) && e.code != errc::kRegistrationChallengeInvalid))
      co_return std::unexpected(e);
    spdlog::warn("register: {} (retrying)", e.to_string());
    // Its own timer: the claim loop's slot timer is cancelled whenever a Run ends.
    register_timer_.expires_after(backoff_delay(attempt, 0.5));
    co_await register_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return fail("cancelled", "stopped before registration");
}

// An operator revoked this agent: it takes nothing new, its Runs stop at their next heartbeat
// (the control plane treats their leases as lost), and the process exits with kExitRevoked so a
// supervisor does not restart it into the same refusal.
void AgentDaemon::revoked(const Error& e) {
  if (revoked_) return;
  revoked_ = true;
  const std::string id = agent_id_.empty() ? "<agentId from GET /api/v1/agents>" : agent_id_;
  spdlog::error("{}: this agent ({}) was revoked by an operator; it stops and exits {}. To "
                "admit this host again an operator resets its keys: POST "
                "/api/v1/agents/{}/reset-keys with {{\"signPublicKey\": \"{}\"}}",
                e.code, id, kExitRevoked, id, keys_.sign.public_key.to_base64());
  (void)credentials_.forget();
  request_stop();
}

// The agent's own heartbeat, also while it drains: its busy slots, the credential's rotation, and
// the first to hear of a revocation or of a credential that expired during an outage.
asio::awaitable<void> AgentDaemon::async_presence_loop() {
  presence_timer_.emplace(ex_);
  while (!finished_) {
    presence_timer_->expires_after(config_.heartbeat_interval);
    co_await presence_timer_->async_wait(asio::as_tuple(asio::use_awaitable));
    if (finished_) co_return;
    auto beat = co_await client_.async_agent_heartbeat(active_);
    if (beat) reachable(true);
    if (beat && beat->rotated) {
      spdlog::info("agent credential rotated (valid until {})", utc_timestamp(beat->expires_at));
      if (auto kept = credentials_.store(client_.agent_token()); !kept)
        spdlog::warn("cannot keep the rotated agent credential: {}", kept.error().to_string());
    }
    if (beat) continue;
    if (beat.error().code == errc::kAgentRevoked) {
      revoked(beat.error());
    } else if ((beat.error().code == errc::kAgentCredentialExpired ||
                beat.error().code == errc::kUnauthorized) && !stopping_ && !registering_) {
      spdlog::warn("the agent credential was refused ({}); registering again", beat.error().code);
      auto again = co_await async_register();
      if (!again && again.error().code == errc::kAgentRevoked) {
        revoked(again.error());
      } else if (!again && !stopping_) {
        // Nothing this process can fix (a revoked pool token, a refused key): stop, exit 1.
        // (A stop meanwhile ends the attempt too: that is a clean stop, not this.)
        spdlog::error("register: {}; stopping", again.error().to_string());
        unregistered_ = true;
        request_stop();
      }
    } else {
      if (is_outage(beat.error())) reachable(false);
      spdlog::warn("heartbeat: {}", beat.error().to_string());
    }
  }
}

runner::RunnerSettings AgentDaemon::runner_settings() const {
  runner::RunnerSettings settings = make_runner_settings(config_, sandbox_);
  settings.package_hashes = package_hashes_;
  settings.tofu_versions = tofu_versions_;
  return settings;
}

asio::awaitable<void> AgentDaemon::async_session(ClaimedJob job) {
  co_await async_run_session(std::move(job));
  // An idle agent gives back what its Runs freed: glibc keeps freed memory in each thread's arena
  // (the blocking pool's threads have one each) until it is trimmed, and an agent waits idle
  // most of its life. Only when no Run is left, so no Run waits on it.
  if (active_ == 0) ::malloc_trim(0);
}

asio::awaitable<void> AgentDaemon::async_run_session(ClaimedJob job) {
  runner::RunnerSettings settings = runner_settings();
  SessionContext ctx{run_services(), *verifier_, keys_.box, std::move(settings),
                     config_.heartbeat_interval, metrics_};
  RunSession session(std::move(ctx), std::move(job));
  // The slot and the session's entry are given back however the session ends (a stray
  // exception included), so a drain never waits for a slot that nothing will free.
  struct Slot {
    AgentDaemon& daemon;
    RunSession* session;
    Slot(AgentDaemon& d, RunSession* s) : daemon(d), session(s) {
      ++daemon.active_;
      daemon.sessions_.insert(session);
      daemon.update_status();
    }
    ~Slot() {
      daemon.sessions_.erase(session);
      --daemon.active_;
      daemon.update_status();
      daemon.slot_timer_.cancel();
    }
  } slot(*this, &session);
  co_await session.async_execute();
}

asio::awaitable<void> AgentDaemon::async_claim_loop() {
  std::uint32_t failures = 0;
  while (!stopping_) {
    // An ephemeral agent takes exactly one Run in its life.
    const auto free = config_.ephemeral ? std::min<std::int64_t>(1 - claimed_ - active_, 1)
                                        : config_.concurrency - active_;
    if (config_.ephemeral && claimed_ > 0) break;
    if (free <= 0) {
      co_await async_wait_slot(std::chrono::hours(1));
      continue;
    }
    // The long poll races only the stop request: a freed slot must not abandon a claim whose
    // answer may already carry a job (it would sit leased to us until the lease expired).
    const auto polled = std::chrono::steady_clock::now();
    auto claimed = co_await (client_.async_claim(free, config_.claim_wait.count()) ||
                             async_wait_stop());
    if (claimed.index() == 1) continue;
    auto& jobs = std::get<0>(claimed);
    if (jobs && !jobs->empty())
      metrics_.observe("claim_wait", std::chrono::duration<double>(
                                         std::chrono::steady_clock::now() - polled).count());
    if (!jobs && jobs.error().code == errc::kAgentRevoked) {
      revoked(jobs.error());
      continue;
    }
    if (!jobs) {
      if (is_outage(jobs.error())) reachable(false);
      spdlog::warn("claim: {}", jobs.error().to_string());
      co_await async_wait_slot(backoff_delay(failures++, 0.5));
      continue;
    }
    reachable(true);
    failures = 0;
    claimed_ += static_cast<std::int64_t>(jobs->size());
    for (auto& job : *jobs) {
      asio::co_spawn(ex_, async_session(std::move(job)), [](std::exception_ptr e) {
        if (e) spdlog::critical("bug: stray exception in a run session: {}", describe(e));
      });
    }
  }
}

Status AgentDaemon::prepare_directories() {
  for (const auto& dir : {config_.state_dir, spool_.root(), config_.work_dir})
    TAKOSUMI_TRY(ensure_directory(dir));
  auto journal = RunJournal::open(config_.state_dir / "runs");
  if (!journal) return std::unexpected(journal.error());
  journal_.emplace(std::move(*journal));
  journal_->remove_temporaries();  // main holds the state directory's lock
  // Caches from before they were kept per Workspace could serve one Workspace another's repository.
  git::remove_unkeyed_caches(config_.state_dir / "git-cache");
  return {};
}

asio::awaitable<RecoverySummary> AgentDaemon::async_recover_journal(bool include_held) {
  RecoveryContext ctx{run_services(), config_.work_dir};
  ctx.max_state_bytes = config_.limits.max_state_bytes;
  // The supervisor gives tofu the grace period after the interrupt, then kills it.
  ctx.lock_wait = config_.interrupt_grace + std::chrono::seconds(30);
  ctx.include_held = include_held;
  co_return co_await async_recover(ctx);
}

asio::awaitable<bool> AgentDaemon::async_start() {
  if (auto s = prepare_directories(); !s) {
    spdlog::error("{}", s.error().to_string());
    co_return false;
  }
  auto registered = co_await async_register();
  if (!registered && registered.error().code == errc::kAgentRevoked) revoked(registered.error());
  if (!registered) {
    spdlog::error("register: {}", registered.error().to_string());
    // The operator's reset names the key to admit: give the exact body to send.
    if (registered.error().code == errc::kAgentKeyMismatch)
      spdlog::error("this agent's signing key ({}) is not admitted; to admit it, an operator "
                    "sends POST /api/v1/agents/<agentId>/reset-keys with the body "
                    "{{\"signPublicKey\": \"{}\"}}; not retrying",
                    (config_.state_dir / "keys/agent-sign.key").string(),
                    keys_.sign.public_key.to_base64());
  }
  co_return registered.has_value();
}

asio::awaitable<int> AgentDaemon::async_push_recovery() {
  if (!co_await async_start()) co_return 1;
  auto summary = co_await async_recover_journal(true);
  spdlog::info("recover: {} delivered, {} still held", summary.delivered, summary.held);
  co_return summary.held == 0 ? 0 : 1;
}

// An ephemeral agent whose Run could not be delivered (lease lost, refused for good) keeps its
// registration and its state directory's journal and spool for the operator, and exits 1: a
// pool that throws the directory away would otherwise lose them silently.
bool AgentDaemon::holds_results_for_operator() const {
  auto contents = journal_->read();
  if (!contents) {
    spdlog::error("ephemeral: the run journal cannot be read ({}); not deregistering",
                  contents.error().to_string());
    return true;
  }
  for (const auto& entry : contents->entries) {
    spdlog::error("ephemeral: run {} is held for the operator ({}): its results stay in {}; not "
                  "deregistering, exit 1 (takosumi-agent recover)",
                  entry.run_id, to_string(entry.phase), config_.state_dir.string());
  }
  return !contents->entries.empty();
}

// An ephemeral agent leaves no registration behind: its credential ends, and the control plane
// lists it as deregistered. Failing to tell it is logged, not fatal: the credential expires.
asio::awaitable<void> AgentDaemon::async_deregister() {
  auto done = co_await async_retry([&] { return client_.async_deregister(); }, 4);
  if (!done) {
    spdlog::warn("deregister: {}", done.error().to_string());
    co_return;
  }
  (void)credentials_.forget();
  spdlog::info("deregistered agent {}", agent_id_);
}

asio::awaitable<int> AgentDaemon::async_run() {
  if (!co_await async_start()) co_return revoked_ ? kExitRevoked : stopping_ ? 0 : 1;
  asio::co_spawn(ex_, async_presence_loop(), [](std::exception_ptr e) {
    if (e) spdlog::critical("bug: stray exception in the heartbeat loop: {}", describe(e));
  });
  // Before any new claim: what a crashed process left is finished or reported first.
  auto recovered = co_await async_recover_journal(false);
  if (recovered.delivered + recovered.held > 0)
    spdlog::info("recovery: {} run(s) reported, {} held for the operator", recovered.delivered,
                 recovered.held);
  ready_ = true;
  update_status();
  notifier_.ready();
  co_await async_claim_loop();
  if (!stopping_) {  // an ephemeral agent's one Run: no more claims
    stopping_ = true;
    update_status();
  }
  while (active_ > 0) co_await async_wait_slot(std::chrono::hours(1));
  update_status();
  bool held = false;
  if (config_.ephemeral && !revoked_) {
    held = holds_results_for_operator();
    if (!held) co_await async_deregister();
  }
  finished_ = true;
  if (presence_timer_) presence_timer_->cancel();
  if (sandbox_.cgroups) sandbox_.cgroups->remove_when_idle();
  spdlog::info("all runs finished; agent stopped");
  co_return revoked_ ? kExitRevoked : (unregistered_ || held) ? 1 : 0;
}

}  // namespace takosumi::agent
