#pragma once
// takosumi-control's Prometheus series (docs/operations.md "Metrics"): what an autoscaler scales
// agent pools on (queue depth, oldest queued age), what an operator watches (Runs by status,
// lease expiries, agents connected, StateVersions created) and the API's traffic by route and
// status class. Counts that live in the database are read at each scrape (refresh), so they are
// right after a restart and cost nothing between scrapes. Every series exists from the start.
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

class ControlMetrics {
 public:
  // routes: every route label (Router::route_labels), so each has its series from the start.
  ControlMetrics(std::string_view version, const std::vector<std::string>& routes);
  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // An answer the API gave (any thread).
  void request(const std::string& route, unsigned status);
  // Reads the database's counts; lease_expiries: RunClaims::lease_expiries().
  Status refresh(Database& db, const Clock& clock, std::int64_t lease_expiries);
  // "3 Run(s) waiting for an agent, 1 running, 2 agent(s) connected", as of the last refresh.
  std::string summary() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Gauge>& runs_;
  // By pool and required labels ("a,b"). Every pool's {labels=""} series is always there; one with
  // labels stays at 0 for kDrainedSeconds after its last waiting Run, then goes (a scraper at any
  // interval sees the 0; Capsules relabelled over months leave no series behind).
  prometheus::Family<prometheus::Gauge>& queue_depth_;
  prometheus::Family<prometheus::Gauge>& oldest_queued_;
  std::map<prometheus::Labels, std::int64_t> queue_series_;  // → when a Run last waited in it
  prometheus::Gauge& agents_;
  prometheus::Counter& lease_expiries_;
  prometheus::Counter& state_versions_;
  std::int64_t queued_ = 0;
  std::int64_t running_ = 0;
  std::int64_t connected_ = 0;
  std::int64_t lease_expiries_seen_ = 0;
  std::int64_t state_versions_seen_ = 0;
};

}  // namespace takosumi::controlplane
