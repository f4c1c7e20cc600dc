#include "agent/session/run_delivery.hpp"

#include <spdlog/spdlog.h>

#include <tuple>

#include "agent/session/retry.hpp"
#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::agent {
namespace asio = boost::asio;

namespace {

constexpr std::size_t kLogChunk = 32 * 1024;

// Awaited directly by async_deliver, whose frame owns run_id and d.
asio::awaitable<Status> async_send_log_tail(RunChannel& client, const std::string& run_id,
                                            const Delivery& d) {
  std::int64_t seq = d.log_seq;
  for (std::size_t at = 0; at < d.log_tail.size(); ++seq) {
    std::size_t cut = std::min(d.log_tail.size() - at, kLogChunk);
    if (auto nl = d.log_tail.rfind('\n', at + cut - 1); nl != std::string::npos && nl >= at)
      cut = nl + 1 - at;
    std::string chunk = d.log_tail.substr(at, cut);
    at += cut;
    auto sent = co_await async_retry(
        [&] { return client.async_append_log(run_id, d.report.lease_token, seq, chunk); }, 0);
    if (!sent) co_return sent;
  }
  co_return Status{};
}

// The report as the JSON body of /complete or, past kMaxInlineReportBytes, streamed as the body
// of PUT .../report. One larger than kMaxRunReportBytes never gets here: async_settle replaced it.
asio::awaitable<Status> async_send_report(RunChannel& client, const std::string& run_id,
                                          const protocol::RunReport& report) {
  const std::string body = boost::json::serialize(protocol::to_json(report));
  if (body.size() <= protocol::kMaxInlineReportBytes)
    co_return co_await async_retry([&] { return client.async_complete(run_id, body); }, 0);
  co_return co_await async_retry(
      [&] { return client.async_put_report(run_id, report.lease_token, body); }, 0);
}

}  // namespace

asio::awaitable<Status> async_deliver(RunChannel& client, std::string run_id, Delivery d) {
  if (auto logs = co_await async_send_log_tail(client, run_id, d); !logs)
    spdlog::warn("run {}: log tail not delivered: {}", run_id, logs.error().to_string());
  // The digests are the runner's, taken as it sealed each file (and checked by the control plane
  // as the bytes arrive): the files are not read again for them.
  const std::string state_sha = d.report.new_state ? d.report.new_state->artifact_sha256 : "";
  for (const auto& [file, kind, sha] : {std::tuple{d.plan, "plan", d.report.plan_artifact_sha256},
                                        std::tuple{d.state, "state", state_sha},
                                        std::tuple{d.plan_view, "plan_view", d.report.plan_view_sha256}}) {
    if (!file) continue;
    const std::string k = kind;
    auto uploaded = co_await async_retry(
        [&] { return client.async_upload(run_id, k, d.report.lease_token, *file, sha); }, 0);
    if (!uploaded)
      spdlog::warn("run {}: {} upload refused: {}", run_id, k, uploaded.error().to_string());
  }
  auto sent = co_await async_send_report(client, run_id, d.report);
  if (sent || sent.error().code != errc::kPayloadTooLarge) co_return sent;
  // Refused for its size, which no retry changes: the Run fails now with what is left of the
  // report (the new state included), rather than being handed out again to end the same way.
  spdlog::error("run {}: run report refused: {}; reporting result_too_large", run_id,
                sent.error().to_string());
  const auto smaller = protocol::result_too_large(
      d.report, "the Run's results are too large for the control plane (" + sent.error().message +
                    "); nothing about the resources is reported: look at the Run's log");
  co_return co_await async_send_report(client, run_id, smaller);
}

asio::awaitable<Status> async_settle(RunServices stores, JournalEntry entry, Delivery d) {
  const auto advance = [&](RunPhase phase, std::string note) {
    if (auto kept = stores.journal.advance(entry, phase, std::move(note), stores.clock.now_unix());
        !kept)
      spdlog::error("run {}: journal: {}", entry.run_id, kept.error().to_string());
  };
  // A report no control plane would take becomes result_too_large before it is spooled, so the
  // spool never holds a delivery that recovery could not read back.
  if (const auto bytes = boost::json::serialize(protocol::to_json(d.report)).size();
      bytes > protocol::kMaxRunReportBytes)
    d.report = protocol::result_too_large(
        d.report, "the Run's results (" + std::to_string(bytes) + " bytes) are larger than the " +
                      std::to_string(protocol::kMaxRunReportBytes) +
                      " a control plane accepts; nothing about the resources is reported");
  if (auto saved = stores.spool.save(entry.run_id, entry.attempt, d); !saved) {
    // Delivered straight from memory; only a restart before the answer would lose it.
    spdlog::error("run {}: cannot spool the results: {}", entry.run_id, saved.error().to_string());
  } else {
    advance(RunPhase::deliver, {});
  }
  auto delivered = co_await async_deliver(stores.client, entry.run_id, d);
  if (delivered) {
    if (auto s = stores.spool.remove(entry.run_id, entry.attempt); !s)
      spdlog::warn("run {}: spool: {}", entry.run_id, s.error().to_string());
    if (auto s = stores.journal.remove(entry.run_id); !s)
      spdlog::warn("run {}: journal: {}", entry.run_id, s.error().to_string());
    co_return delivered;
  }
  const bool lost = delivered.error().code == errc::kLeaseLost;
  advance(lost ? RunPhase::lease_lost : RunPhase::undeliverable, delivered.error().to_string());
  spdlog::error("run {}: results not accepted ({}); kept in {} for the operator: see "
                "`takosumi-agent recover`",
                entry.run_id, delivered.error().to_string(),
                stores.spool.dir(entry.run_id, entry.attempt).string());
  co_return delivered;
}

}  // namespace takosumi::agent
