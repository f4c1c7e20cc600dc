#include "agent/durable/run_recovery.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <set>

#include "agent/session/run_delivery.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/file_lock.hpp"
#include "common/failure_codes.hpp"
#include "protocol/job_manifest.hpp"
#include "common/json_fields.hpp"
#include "common/offload.hpp"
#include "runner/host.hpp"

namespace takosumi::agent {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// True once tofu has stopped: the supervisor holds the workspace lock while tofu runs
// (supervise/supervise.hpp).
asio::awaitable<bool> async_wait_for_tofu(const fs::path& lock_file, std::chrono::seconds limit,
                                          std::string run_id) {
  if (!is_file_locked(lock_file)) co_return true;
  spdlog::info("run {}: tofu is still stopping under its supervisor; waiting up to {} s", run_id,
               limit.count());
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    timer.expires_after(std::chrono::milliseconds(250));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!is_file_locked(lock_file)) co_return true;
  }
  co_return false;
}

Result<protocol::JobManifest> parse_manifest(const std::string& payload) {
  auto o = parse_object(payload, 4u << 20);
  if (!o) return std::unexpected(o.error());
  return protocol::job_manifest_from_json(*o);
}

std::string phase_words(RunPhase phase) {
  return phase == RunPhase::apply ? "during the apply" : "before the apply started";
}

// The interrupted report of a Run whose agent died; state and message from what was recovered.
Delivery interrupted(const protocol::JobManifest& m, RunPhase phase,
                     const std::optional<runner::RecoveredState>& state) {
  Delivery d;
  d.report.status = "failed";
  d.report.failure_code = errc::kInterrupted;
  d.report.source_commit = m.source.commit;
  std::string message = "the agent stopped " + phase_words(phase) + " (attempt " +
                        std::to_string(m.attempt) + ")";
  if (state) {
    d.state = state->sealed.artifact.path;
    d.report.new_state = protocol::NewStateDescriptor{
        state->sealed.artifact.artifact_sha256, state->sealed.artifact.plaintext_sha256,
        state->sealed.identity.serial, state->sealed.identity.lineage,
        m.prior_state ? m.prior_state->generation : 0};
    message += "; the state tofu persisted (serial " + std::to_string(state->sealed.identity.serial) +
               ", from " + state->source +
               ") is kept as a partial StateVersion: review the Capsule and plan again";
  } else if (phase == RunPhase::apply) {
    message += "; tofu persisted no change to the state: plan again";
  } else {
    message += "; nothing was applied: start the Run again";
  }
  d.report.failure_message = std::move(message);
  return d;
}

asio::awaitable<Result<Delivery>> async_rebuild(const RecoveryContext& ctx, const JournalEntry& e,
                                                const protocol::JobManifest& m) {
  auto spooled = ctx.spool.load(e.run_id, e.attempt);
  if (!spooled) co_return std::unexpected(spooled.error());
  if (*spooled) co_return std::move(**spooled);
  std::optional<runner::RecoveredState> state;
  if (e.phase != RunPhase::claimed) {
    const fs::path outbox = ctx.spool.dir(e.run_id, e.attempt);
    auto found = co_await async_offload(ctx.blocking.get_executor(), [&] {
      return runner::recover_newest_state(ctx.work_root, outbox, m, ctx.max_state_bytes);
    });
    if (!found) co_return std::unexpected(found.error());
    state = std::move(*found);
  }
  // A lease_lost/undeliverable entry without a saved delivery was lost in the apply.
  const RunPhase phase = e.phase == RunPhase::claimed ? RunPhase::claimed : RunPhase::apply;
  co_return interrupted(m, phase, state);
}

asio::awaitable<Status> async_recover_one(const RecoveryContext& ctx, JournalEntry e) {
  spdlog::warn("run {}: found in the journal at phase {} (attempt {}); recovering", e.run_id,
               to_string(e.phase), e.attempt);
  auto hold = [&](const Error& why) -> Status {
    (void)ctx.journal.advance(e, RunPhase::undeliverable, why.to_string(), ctx.clock.now_unix());
    spdlog::error("run {}: cannot be recovered automatically: {}; kept for the operator "
                  "(takosumi-agent recover)", e.run_id, why.to_string());
    return std::unexpected(why);
  };
  auto manifest = parse_manifest(e.manifest_payload);
  if (!manifest) co_return hold(manifest.error().with_context("journaled manifest"));
  auto ws = runner::RunWorkspace::open_existing(ctx.work_root, e.run_id, e.attempt);
  if (ws && !co_await async_wait_for_tofu(ws->lock_file(), ctx.lock_wait, e.run_id)) {
    // Reporting now would free the Capsule while this tofu may still change things: the entry
    // stays as it is and the next start (or `recover --push`) tries again.
    spdlog::error("run {}: tofu still runs in {} after {} s; not reported yet", e.run_id,
                  ws->root().string(), ctx.lock_wait.count());
    co_return fail(errc::kConflict, "tofu is still running");
  }
  auto delivery = co_await async_rebuild(ctx, e, *manifest);
  if (!delivery) co_return hold(delivery.error().with_context("recover state"));
  // The state is sealed in the spool now; the plaintext goes.
  if (ws)
    if (auto wiped = ws->wipe(); !wiped)
      spdlog::error("run {}: {}", e.run_id, wiped.error().to_string());
  delivery->report.lease_token = e.lease_token;
  delivery->report.attempt = e.attempt;
  const std::string code = delivery->report.failure_code;
  const bool applied_nothing = e.phase == RunPhase::claimed;
  auto settled = co_await async_settle(ctx, e,
                                       std::move(*delivery));
  if (settled) {
    spdlog::info("run {}: recovered and reported{}", e.run_id, code.empty() ? "" : " (" + code + ")");
  } else if (applied_nothing && settled.error().code == errc::kLeaseLost) {
    // Another agent has the Run now and this attempt changed nothing: nothing to keep.
    spdlog::info("run {}: another agent took it over; this attempt applied nothing", e.run_id);
    (void)ctx.spool.remove(e.run_id, e.attempt);
    (void)ctx.journal.remove(e.run_id);
    co_return Status{};
  }
  co_return settled;
}

}  // namespace

asio::awaitable<RecoverySummary> async_recover(RecoveryContext ctx) {
  RecoverySummary summary;
  auto contents = ctx.journal.read();
  if (!contents) {
    spdlog::error("run journal: {}", contents.error().to_string());
    co_return summary;
  }
  for (const auto& bad : contents->unreadable)
    spdlog::error("run journal: {} is unreadable and left in place for the operator", bad);
  for (auto& e : contents->entries) {
    if (is_held_for_operator(e.phase) && !ctx.include_held) {
      ++summary.held;
      spdlog::warn("run {}: held for the operator ({}: {}); see `takosumi-agent recover`",
                   e.run_id, to_string(e.phase), e.note);
      continue;
    }
    auto done = co_await async_recover_one(ctx, e);
    done ? ++summary.delivered : ++summary.held;
  }
  // An unreadable entry may own a workspace with the only plaintext state: nothing is wiped then.
  auto after = ctx.journal.read();
  if (after && after->unreadable.empty()) wipe_orphan_workspaces(ctx.work_root, *after);
  co_return summary;
}

void wipe_orphan_workspaces(const fs::path& work_root, const JournalContents& journal) {
  std::set<std::string> named;
  for (const auto& e : journal.entries) named.insert(e.run_id + "-" + std::to_string(e.attempt));
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(work_root, ec)) {
    const auto name = item.path().filename().string();
    if (named.contains(name) || !item.is_directory(ec)) continue;
    if (is_file_locked(item.path() / "tofu.lock")) continue;  // tofu still runs there
    if (auto wiped = remove_tree(item.path()); !wiped)
      spdlog::warn("workspace {}: {}", name, wiped.error().to_string());
    else
      spdlog::info("workspace {} belonged to no journaled Run: wiped", name);
  }
}

}  // namespace takosumi::agent
