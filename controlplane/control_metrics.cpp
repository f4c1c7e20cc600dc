#include "controlplane/control_metrics.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

#include "controlplane/store/agent_pool_store.hpp"
#include "controlplane/store/agent_registry.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/run_store.hpp"
#include "service/metrics_listener.hpp"

namespace takosumi::controlplane {
namespace {

namespace prom = prometheus;

constexpr std::array<std::string_view, 5> kStatuses{run_status::kQueued, run_status::kRunning,
                                                    run_status::kSucceeded, run_status::kFailed,
                                                    run_status::kCancelled};
constexpr std::array<std::string_view, 3> kClasses{"2xx", "4xx", "5xx"};

// The default pool's series exists from the start, as every other series does.
const prom::Labels kDefaultPoolSeries{{"pool", "default"}, {"labels", ""}};
constexpr std::int64_t kDrainedSeconds = 600;

// "a,b": the required labels as one label value (sorted, as a Capsule keeps them).
std::string joined(const std::vector<std::string>& labels) {
  std::string out;
  for (const auto& l : labels) out += (out.empty() ? "" : ",") + l;
  return out;
}

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
                       .Register(*registry_)),
      oldest_queued_(prom::BuildGauge()
                         .Name("takosumi_control_queue_oldest_age_seconds")
                         .Help("Age of the oldest queued Run (0 when none), by pool and"
                               " required labels")
                         .Register(*registry_)),
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
  service::add_build_info(*registry_, "takosumi_control_build_info",
                          "The control plane's version (always 1)", std::string(version));
  for (const auto& route : routes)
    for (auto c : kClasses) requests_.Add({{"route", route}, {"code", std::string(c)}});
  for (auto status : kStatuses) runs_.Add({{"status", std::string(status)}});
  queue_depth_.Add(kDefaultPoolSeries);
  oldest_queued_.Add(kDefaultPoolSeries);
}

void ControlMetrics::request(const std::string& route, unsigned status) {
  requests_.Add({{"route", route}, {"code", service::status_class(status)}}).Increment();
}

Status ControlMetrics::refresh(Database& db, const Clock& clock, std::int64_t lease_expiries) {
  const std::int64_t now = clock.now_unix();
  for (auto status : kStatuses) {
    auto n = db.single_integer("SELECT count(*) FROM runs WHERE status = ?", std::string(status));
    if (!n) return std::unexpected(n.error());
    runs_.Add({{"status", std::string(status)}}).Set(static_cast<double>(*n));
    if (status == run_status::kRunning) running_ = *n;
  }
  // Waiting for an agent, as run_claims.cpp next_candidate finds them, by the pool and labels
  // their Capsule requires. The depth counts only those an agent of the pool could take now (no
  // other Run of the Capsule holds it, and the Workspace may use the pool, as a claim requires):
  // what more agents would start on. The age looks at all of them, so a stuck one shows.
  auto s = db.query("SELECT c.agent_pool, c.agent_labels,"
                    " CAST(sum(CASE WHEN" + std::string(kCapsuleFree) + " AND" +
                        std::string(kPoolUsable) + " THEN 1 ELSE 0 END) AS BIGINT),"
                    " min(r.created_at) FROM runs r JOIN capsules c ON c.id = r.capsule_id WHERE" +
                        std::string(kWaitingForAgent) + " GROUP BY c.agent_pool, c.agent_labels",
                    now);
  if (!s) return std::unexpected(s.error());
  struct Waiting {
    std::int64_t depth = 0;
    std::int64_t oldest = 0;  // 0: none
  };
  std::map<prom::Labels, Waiting> waiting;
  for (;;) {
    auto row = s->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    // Labels stored as text a Capsule may hold in any order before schema checks: one series
    // per set, however it was written.
    std::vector<std::string> labels = agent_labels_from_text(s->text(1));
    std::ranges::sort(labels);
    Waiting& w = waiting[prom::Labels{{"pool", s->text(0)}, {"labels", joined(labels)}}];
    w.depth += s->integer(2);
    const std::int64_t created = s->integer(3);
    if (w.oldest == 0 || created < w.oldest) w.oldest = created;
  }
  auto pools = collect(db.query("SELECT name FROM agent_pools"),
                       [](const Statement& row) { return row.text(0); });
  if (!pools) return std::unexpected(pools.error());
  auto agents = db.single_integer("SELECT count(*) FROM agents WHERE revoked_at IS NULL AND"
                      " deregistered_at IS NULL AND last_seen_at >= ?",
                      now - kAgentConnectedSeconds);
  auto versions = db.single_integer("SELECT count(*) FROM state_versions");
  if (const Error* e = first_error(agents, versions)) return std::unexpected(*e);
  for (const auto& [series, w] : waiting) queue_series_[series] = now;
  // Every pool's unlabelled series, always (now: it is never old).
  std::vector<prom::Labels> pool_series;
  for (const auto& pool : *pools) pool_series.push_back({{"pool", pool}, {"labels", ""}});
  for (const auto& series : pool_series) queue_series_[series] = now;
  queued_ = 0;
  std::erase_if(queue_series_, [&](const auto& entry) {
    const auto& [series, last_waiting] = entry;
    auto& depth = queue_depth_.Add(series);
    auto& oldest = oldest_queued_.Add(series);
    if (now - last_waiting >= kDrainedSeconds) {
      queue_depth_.Remove(&depth);
      oldest_queued_.Remove(&oldest);
      return true;
    }
    auto it = waiting.find(series);
    const Waiting w = it == waiting.end() ? Waiting{} : it->second;
    depth.Set(static_cast<double>(w.depth));
    oldest.Set(w.oldest == 0 ? 0.0 : static_cast<double>(now - w.oldest));
    queued_ += w.depth;
    return false;
  });
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
