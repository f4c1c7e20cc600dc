#include "controlplane/control_metrics.hpp"

#include <array>
#include <string_view>

#include "controlplane/store/model.hpp"

namespace takosumi::controlplane {
namespace {

namespace prom = prometheus;

constexpr std::array<std::string_view, 5> kStatuses{run_status::kQueued, run_status::kRunning,
                                                    run_status::kSucceeded, run_status::kFailed,
                                                    run_status::kCancelled};
constexpr std::array<std::string_view, 3> kClasses{"2xx", "4xx", "5xx"};
// An agent is connected when it called within this many seconds (it heartbeats every few).
constexpr std::int64_t kConnectedSeconds = 120;

std::string status_class(unsigned status) {
  return status < 300 ? "2xx" : status < 500 ? "4xx" : "5xx";
}

// Until issue 17 brings agent pools and label requirements every Run waits in the one default
// pool; the labels stay part of the series so a scaling rule written now keeps working.
const prom::Labels kDefaultPool{{"pool", "default"}, {"labels", ""}};

}  // namespace

ControlMetrics::ControlMetrics(std::string_view version, const std::vector<std::string>& routes)
    : requests_(prom::BuildCounter()
                    .Name("takosumi_control_http_requests_total")
                    .Help("API answers by route and status class")
                    .Register(*registry_)),
      runs_(prom::BuildGauge()
                .Name("takosumi_control_runs")
                .Help("Runs by status")
                .Register(*registry_)),
      queue_depth_(prom::BuildGauge()
                       .Name("takosumi_control_queue_depth")
                       .Help("Runs queued for an agent, by pool and required labels")
                       .Register(*registry_)
                       .Add(kDefaultPool)),
      oldest_queued_(prom::BuildGauge()
                         .Name("takosumi_control_queue_oldest_age_seconds")
                         .Help("Age of the oldest queued Run (0 when none)")
                         .Register(*registry_)
                         .Add(kDefaultPool)),
      agents_(prom::BuildGauge()
                  .Name("takosumi_control_agents_connected")
                  .Help("Agents that called within the last two minutes")
                  .Register(*registry_)
                  .Add({})),
      lease_expiries_(prom::BuildCounter()
                          .Name("takosumi_control_lease_expiries_total")
                          .Help("Run leases that expired (their agent went silent)")
                          .Register(*registry_)
                          .Add({})),
      state_versions_(prom::BuildCounter()
                          .Name("takosumi_control_state_versions_created_total")
                          .Help("StateVersions recorded")
                          .Register(*registry_)
                          .Add({})) {
  prom::BuildGauge()
      .Name("takosumi_control_build_info")
      .Help("The control plane's version (always 1)")
      .Register(*registry_)
      .Add({{"version", std::string(version)}})
      .Set(1);
  for (const auto& route : routes)
    for (auto c : kClasses) requests_.Add({{"route", route}, {"code", std::string(c)}});
  for (auto status : kStatuses) runs_.Add({{"status", std::string(status)}});
}

void ControlMetrics::request(const std::string& route, unsigned status) {
  requests_.Add({{"route", route}, {"code", status_class(status)}}).Increment();
}

Status ControlMetrics::refresh(Database& db, const Clock& clock, std::int64_t lease_expiries) {
  const std::int64_t now = clock.now_unix();
  for (auto status : kStatuses) {
    auto n = db.single_integer("SELECT count(*) FROM runs WHERE status = ?", std::string(status));
    if (!n) return std::unexpected(n.error());
    runs_.Add({{"status", std::string(status)}}).Set(static_cast<double>(*n));
    if (status == run_status::kRunning) running_ = *n;
  }
  // Waiting for an agent: queued Runs, and running ones whose agent went silent (an expired
  // lease no apply holds), as run_claims.cpp next_candidate finds them. The depth counts only
  // those an agent could take now (no other Run of the Capsule holds it, as a claim requires):
  // what more agents would start on. The age looks at all of them, so a stuck one shows.
  constexpr std::string_view kWaiting =
      " FROM runs r WHERE (r.status = 'queued' OR (r.status = 'running' AND r.lease_expires_at <= ?1"
      " AND (r.apply_started_attempt IS DISTINCT FROM r.attempt OR r.cancel_requested = 1)))";
  constexpr std::string_view kCapsuleFree =
      " AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.capsule_id = r.capsule_id AND o.id <> r.id"
      " AND o.status = 'running' AND (o.lease_expires_at > ?1 OR o.apply_started_attempt = o.attempt))";
  auto waiting =
      db.single_integer("SELECT count(*)" + std::string(kWaiting) + std::string(kCapsuleFree), now);
  auto oldest = db.single_integer("SELECT coalesce(min(r.created_at), 0)" + std::string(kWaiting), now);
  auto agents = db.single_integer("SELECT count(*) FROM agents WHERE revoked_at IS NULL AND"
                      " deregistered_at IS NULL AND last_seen_at >= ?",
                      now - kConnectedSeconds);
  auto versions = db.single_integer("SELECT count(*) FROM state_versions");
  if (const Error* e = first_error(waiting, oldest, agents, versions)) return std::unexpected(*e);
  queue_depth_.Set(static_cast<double>(*waiting));
  queued_ = *waiting;
  oldest_queued_.Set(*oldest == 0 ? 0.0 : static_cast<double>(now - *oldest));
  agents_.Set(static_cast<double>(*agents));
  connected_ = *agents;
  // Counters only grow: add what is new since the last scrape.
  if (*versions > state_versions_seen_)
    state_versions_.Increment(static_cast<double>(*versions - state_versions_seen_));
  state_versions_seen_ = *versions;
  if (lease_expiries > lease_expiries_seen_)
    lease_expiries_.Increment(static_cast<double>(lease_expiries - lease_expiries_seen_));
  lease_expiries_seen_ = lease_expiries;
  return {};
}

std::string ControlMetrics::summary() const {
  return std::to_string(queued_) + " Run(s) waiting for an agent, " + std::to_string(running_) + " running, " +
         std::to_string(connected_) + " agent(s) connected";
}

}  // namespace takosumi::controlplane
