#include "agent/offline/offline_run.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

#include "agent/offline/bundle_channel.hpp"
#include "agent/durable/nonce_journal.hpp"
#include "agent/durable/run_recovery.hpp"
#include "agent/session/run_session.hpp"
#include "agent/service/runner_settings.hpp"
#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_fields.hpp"
#include "common/version.hpp"
#include "crypto/sha256.hpp"
#include "common/failure_codes.hpp"
#include "protocol/offline_bundle.hpp"
#include "runner/host.hpp"

namespace takosumi::agent {
namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;

// Members of a Run bundle together: a source pack, a prior state and a plan.
std::uint64_t max_bundle_bytes(const config::AgentConfig& config) {
  return 3 * config.limits.max_state_bytes + (512ull << 20);
}

struct OfflineDirs {
  fs::path root;  // <stateDir>/offline/<run id>
  fs::path in() const { return root / "in"; }
  fs::path out() const { return root / "out"; }
  fs::path index() const { return root / "bundle.index"; }
  fs::path started() const { return root / "started"; }
  // Whether this directory holds the Run of exactly this bundle.
  bool holds(const protocol::OpenedBundle& bundle) const {
    auto kept = read_file(index(), protocol::kMaxBundleIndexBytes);
    return kept && *kept == bundle.index;
  }
};

// The manifest's JSON, read without checking it (it was verified, or is about to be).
Result<boost::json::object> manifest_object(const protocol::SignedManifest& signed_manifest) {
  auto payload = base64_decode(signed_manifest.payload);
  if (!payload) return fail(errc::kManifestInvalid, "the manifest is not base64");
  return parse_object(std::string_view(reinterpret_cast<const char*>(payload->data()),
                                       payload->size()),
                      protocol::kMaxBundleIndexBytes);
}

// The attempt of the Run the bundle's manifest describes (verified by then).
Result<std::int64_t> manifest_attempt(const protocol::SignedManifest& signed_manifest) {
  auto o = manifest_object(signed_manifest);
  if (!o) return std::unexpected(o.error());
  return get_int(*o, "attempt");
}

std::string manifest_nonce(const protocol::SignedManifest& signed_manifest) {
  auto o = manifest_object(signed_manifest);
  if (!o) return {};
  auto nonce = get_string(*o, "nonce", 128);
  return nonce ? *nonce : std::string();
}

class OfflineRun {
 public:
  OfflineRun(const OfflineRunContext& ctx, protocol::RunBundleIndex index, OfflineDirs dirs)
      : ctx_(ctx),
        index_(std::move(index)),
        dirs_(std::move(dirs)),
        agent_id_(protocol::offline_agent_id(ctx.keys.sign.public_key.to_base64())),
        channel_(dirs_.in(), dirs_.out(), dirs_.started(), index_.run_id, index_.lease_token,
                 index_.lease_expires_at),
        spool_(ctx.config.state_dir / "spool"),
        metrics_(TAKOSUMI_VERSION) {}

  // The journal of the state directory, holding at most this bundle's Run. Returns whether it
  // holds this Run (an execute that did not finish).
  Result<bool> open_journal() {
    auto journal = RunJournal::open(ctx_.config.state_dir / "runs");
    if (!journal) return std::unexpected(journal.error());
    journal_.emplace(std::move(*journal));
    journal_->remove_temporaries();
    auto contents = journal_->read();
    if (!contents) return std::unexpected(contents.error());
    bool ours = false;
    for (const auto& entry : contents->entries) {
      if (entry.run_id != index_.run_id)
        return fail(errc::kConflict,
                    "the state directory's journal holds run " + entry.run_id +
                        ", not this bundle's; finish it first (takosumi-agent recover lists it)");
      ours = true;
    }
    return ours;
  }

  // A fresh Run: its members checked against the index and put in place, then the session.
  // resumed: an earlier execute of this bundle recorded its nonce and died before its journal
  // held the Run, so nothing of it ran: that nonce is not a replay here.
  Status run_fresh(const protocol::OpenedBundle& bundle, bool resumed) {
    TAKOSUMI_TRY(remove_tree(dirs_.root));
    TAKOSUMI_TRY(ensure_directory(dirs_.root));
    // Which bundle this directory belongs to: only that one may write its result again.
    TAKOSUMI_TRY(write_file_atomic(dirs_.index(), bundle.index));
    TAKOSUMI_TRY(protocol::extract_members(bundle, index_.members, dirs_.in(),
                                           max_bundle_bytes(ctx_.config)));
    auto nonces = NonceJournal::open(ctx_.config.state_dir / "nonces", ctx_.clock.now_unix());
    if (!nonces) return std::unexpected(nonces.error());
    protocol::ManifestVerifier verifier(ctx_.keys.control_signing, agent_id_, ctx_.clock);
    const std::string own_nonce = manifest_nonce(index_.manifest);
    bool own_recorded = false;
    for (const auto& [nonce, expires] : nonces->entries()) {
      if (nonce == own_nonce) own_recorded = true;
      if (!(resumed && nonce == own_nonce)) verifier.remember(nonce, expires);
    }
    // Recorded unless it is on disk already: whatever happens next, this bundle runs once.
    verifier.set_recorder([&](const std::string& nonce, std::int64_t expires) {
      if (resumed && nonce == own_nonce && own_recorded) return Status{};
      return nonces->record(nonce, expires, ctx_.clock.now_unix());
    });
    runner::RunnerSettings settings = make_runner_settings(ctx_.config, ctx_.sandbox);
    // An offline site has no network to give a Run, whatever the Capsule or pool allow.
    settings.policy.network = protocol::NetworkMode::none;
    settings.tofu_versions = std::make_shared<runner::TofuVersionCache>();
    settings.package_hashes = std::make_shared<runner::PackageHashCache>();
    SessionContext session_ctx{services(), verifier, ctx_.keys.box, std::move(settings),
                               ctx_.config.heartbeat_interval, metrics_};
    RunSession session(std::move(session_ctx),
                       ClaimedJob{index_.run_id, index_.lease_token, index_.lease_expires_at,
                                  index_.manifest});
    run_io([&]() -> asio::awaitable<void> { co_await session.async_execute(); },
           [&] { session.cancel(); });
    return {};
  }

  // What an interrupted execute left: reported as a restarted daemon would (with the state tofu
  // persisted when the apply had started).
  Status run_recovery() {
    RecoveryContext rctx{services(), ctx_.config.work_dir};
    rctx.max_state_bytes = ctx_.config.limits.max_state_bytes;
    rctx.lock_wait = ctx_.config.interrupt_grace + std::chrono::seconds(30);
    rctx.include_held = true;
    RecoverySummary summary;
    run_io([&]() -> asio::awaitable<void> { summary = co_await async_recover(rctx); }, [] {});
    if (summary.held > 0)
      return fail(errc::kConflict, "the interrupted Run could not be reported; takosumi-agent "
                                   "recover shows why");
    return {};
  }

  // The journal no longer holds the Run: it reported. Writes the result bundle, signed.
  Status write_result(const fs::path& out) {
    auto contents = journal_->read();
    if (!contents) return std::unexpected(contents.error());
    for (const auto& entry : contents->entries)
      return fail(errc::kConflict, "run " + entry.run_id + " is held as " +
                                       std::string(to_string(entry.phase)) + ": " + entry.note);
    auto files = channel_.result_files();
    if (!files) return std::unexpected(files.error());
    auto members = protocol::describe_members(*files);
    if (!members) return std::unexpected(members.error());
    auto attempt = manifest_attempt(index_.manifest);
    if (!attempt) return std::unexpected(attempt.error());
    protocol::RunResultIndex result{index_.run_id, *attempt, agent_id_, index_.lease_token,
                                    std::move(*members)};
    TAKOSUMI_TRY(protocol::write_bundle(out, protocol::sign_run_result(result, ctx_.keys.sign),
                                        *files));
    // The Run bundle's members are no longer needed; the result's stay until the next Run, so the
    // result can be written again if the media failed.
    return remove_tree(dirs_.in());
  }

 private:
  RunServices services() { return {channel_, *journal_, spool_, ctx_.clock, blocking_}; }

  // Runs `work` to its end; SIGINT or SIGTERM calls `cancel` (the Run ends cancelled and its
  // result says so), a second one leaves at once as a crash would (running the command again
  // reports the Run).
  template <class Work, class Cancel>
  void run_io(Work work, Cancel cancel) {
    io_.restart();
    asio::signal_set signals(io_, SIGINT, SIGTERM);
    int stops = 0;
    std::function<void()> arm = [&] {
      signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec) return;
        if (++stops == 1) {
          spdlog::warn("stop signal: cancelling the Run; a second one exits at once");
          cancel();
          arm();
          return;
        }
        spdlog::default_logger()->flush();
        std::_Exit(1);
      });
    };
    arm();
    asio::co_spawn(io_, work(), [&](std::exception_ptr e) {
      if (e) spdlog::critical("bug: stray exception in an offline Run");
      signals.cancel();
    });
    io_.run();
  }

  // Outlives what the Runs made on it (a session's timers are destroyed with the session, after
  // run_io has returned).
  asio::io_context io_;
  const OfflineRunContext& ctx_;
  protocol::RunBundleIndex index_;
  OfflineDirs dirs_;
  std::string agent_id_;
  BundleChannel channel_;
  RunSpool spool_;
  std::optional<RunJournal> journal_;
  asio::thread_pool blocking_{2};
  AgentMetrics metrics_;
};

// The index's run id and lease token are not signed: they must be what the signed manifest names
// (its runId, the sha256 of the lease in leaseSha256), so a result can only ever be this Run's.
Status check_job(const protocol::RunBundleIndex& index) {
  auto o = manifest_object(index.manifest);
  if (!o) return std::unexpected(o.error());
  auto manifest = protocol::job_manifest_from_json(*o);
  if (!manifest) return std::unexpected(manifest.error());
  if (manifest->run_id != index.run_id)
    return fail(errc::kBundleInvalid, "the bundle names run " + index.run_id +
                                          " but its manifest is for run " + manifest->run_id);
  if (manifest->lease_sha256.empty() ||
      crypto::sha256_hex(index.lease_token) != manifest->lease_sha256)
    return fail(errc::kBundleInvalid, "the bundle's lease is not the one its manifest names");
  return {};
}

Status execute(const OfflineRunContext& ctx, const fs::path& bundle_path, const fs::path& out) {
  auto bundle = protocol::open_bundle(bundle_path);
  if (!bundle) return std::unexpected(bundle.error());
  auto index = protocol::run_bundle_index_from_text(bundle->index);
  if (!index) return std::unexpected(index.error());
  if (!runner::is_safe_file_name(index->run_id))
    return fail(errc::kBundleInvalid, "the bundle's run id is not an id");
  OfflineDirs dirs{ctx.config.state_dir / "offline" / index->run_id};
  OfflineRun run(ctx, *index, dirs);
  auto interrupted = run.open_journal();
  if (!interrupted) return std::unexpected(interrupted.error());
  std::error_code ec;
  const bool same_bundle = dirs.holds(*bundle);
  if (*interrupted) {
    if (!same_bundle)
      return fail(errc::kConflict, "run " + index->run_id + " of another bundle did not finish "
                                   "here; execute that bundle again first");
    spdlog::info("run {}: an earlier execute did not finish; reporting it", index->run_id);
    TAKOSUMI_TRY(run.run_recovery());
  } else if (same_bundle && fs::exists(dirs.out() / "report.json", ec)) {
    spdlog::info("run {}: already executed; writing its result again", index->run_id);
  } else {
    // Authenticated before any member costs a read, and before anything of an earlier bundle of
    // this Run is touched: not signed for this agent, expired or replayed is refused here (the
    // session checks it again and records its nonce).
    auto nonces = NonceJournal::open(ctx.config.state_dir / "nonces", ctx.clock.now_unix());
    if (!nonces) return std::unexpected(nonces.error());
    protocol::ManifestVerifier precheck(
        ctx.keys.control_signing, protocol::offline_agent_id(ctx.keys.sign.public_key.to_base64()),
        ctx.clock);
    for (const auto& [nonce, expires] : nonces->entries()) precheck.remember(nonce, expires);
    // A nonce spent by an earlier execute of this very bundle that died before anything of the
    // Run began is no replay: its directory holds this bundle, no report, and no mark that the
    // bundle's members were ever served to a session (BundleChannel makes that mark durably,
    // after the session journaled the Run; a journal entry the operator discarded leaves it).
    const bool resumed = same_bundle && !fs::exists(dirs.out() / "report.json", ec) &&
                         !fs::exists(dirs.started(), ec);
    auto checked = precheck.verify(index->manifest);
    if (!checked && !(resumed && checked.error().code == errc::kManifestReplayed))
      return std::unexpected(checked.error());
    TAKOSUMI_TRY(check_job(*index));
    TAKOSUMI_TRY(run.run_fresh(*bundle, resumed));
  }
  return run.write_result(out);
}

}  // namespace

int execute_run_bundle(const OfflineRunContext& ctx, const fs::path& bundle, const fs::path& result) {
  auto done = execute(ctx, bundle, result);
  if (!done) {
    spdlog::error("run-bundle execute: {}", done.error().to_string());
    return 1;
  }
  spdlog::info("run-bundle execute: result written to {}; import it on the connected side "
               "(takosumi run-bundle import)", result.string());
  return 0;
}

std::string offline_keys_json(const config::AgentConfig& config, const AgentKeys& keys) {
  const std::string sign = keys.sign.public_key.to_base64();
  return boost::json::serialize(boost::json::object{{"name", config.name},
                                                    {"agentId", protocol::offline_agent_id(sign)},
                                                    {"boxPublicKey", keys.box.public_key.to_base64()},
                                                    {"signPublicKey", sign}});
}

}  // namespace takosumi::agent
