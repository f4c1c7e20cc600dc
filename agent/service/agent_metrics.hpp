#pragma once
// The agent's Prometheus series (docs/operations.md "Metrics"). Every series exists from the start
// at zero, so a dashboard or an alert sees "none yet" rather than "no data". Labels carry only
// fixed vocabulary (Run types, results, phases, status classes), never an id, a path or a value
// from a Run, so nothing secret and nothing unbounded reaches a scrape. Event-loop thread only.
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/run_type.hpp"

namespace takosumi::agent {

class AgentMetrics {
 public:
  explicit AgentMetrics(std::string_view version);
  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // result: succeeded, failed or cancelled. phase_millis: the report's (checkout, init, plan,
  // apply are observed; the runner's other phases are not part of the histogram).
  void run_finished(protocol::RunType type, std::string_view result,
                    const std::map<std::string, std::int64_t>& phase_millis);
  // claim_wait (a long poll that brought work) and delivery (results to acknowledgement).
  void observe(std::string_view phase, double seconds);
  // An answer from the control plane (status 0: none came); delivery: it carried a Run's results.
  void request(unsigned status, bool delivery);
  void slots(std::int64_t busy, std::int64_t total);
  void spool_bytes(std::uint64_t bytes);

 private:
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& runs_;
  prometheus::Family<prometheus::Histogram>& phases_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Counter& delivery_retries_;
  prometheus::Gauge& busy_;
  prometheus::Gauge& total_;
  prometheus::Gauge& spool_;
};

}  // namespace takosumi::agent
