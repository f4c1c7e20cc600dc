#include "agent/service/agent_metrics.hpp"

#include <array>

#include "service/metrics_listener.hpp"

namespace takosumi::agent {
namespace {

namespace prom = prometheus;

constexpr std::array<protocol::RunType, 4> kTypes{protocol::RunType::plan, protocol::RunType::apply,
                                                  protocol::RunType::destroy_plan,
                                                  protocol::RunType::drift_check};
constexpr std::array<std::string_view, 3> kResults{"succeeded", "failed", "cancelled"};
constexpr std::array<std::string_view, 6> kPhases{"claim_wait", "checkout", "init",
                                                  "plan",       "apply",    "delivery"};
constexpr std::array<std::string_view, 4> kStatusClasses{"2xx", "4xx", "5xx", "none"};

// From a tenth of a second to two hours: checkouts and inits are seconds, applies can be hours.
prom::Histogram::BucketBoundaries buckets() {
  return {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200};
}

}  // namespace

AgentMetrics::AgentMetrics(std::string_view version)
    : runs_(prom::BuildCounter()
                .Name("takosumi_agent_runs_total")
                .Help("Runs this agent finished, by type and result")
                .Register(*registry_)),
      phases_(prom::BuildHistogram()
                  .Name("takosumi_agent_phase_duration_seconds")
                  .Help("Time spent per phase of a Run (claim_wait: a long poll that brought work)")
                  .Register(*registry_)),
      requests_(prom::BuildCounter()
                    .Name("takosumi_agent_control_plane_requests_total")
                    .Help("Requests to the control plane by answer status class (none: no answer)")
                    .Register(*registry_)),
      delivery_retries_(prom::BuildCounter()
                            .Name("takosumi_agent_delivery_retries_total")
                            .Help("Deliveries of a Run's results that failed and are retried")
                            .Register(*registry_)
                            .Add({})),
      busy_(prom::BuildGauge()
                .Name("takosumi_agent_slots_busy")
                .Help("Slots running a Run")
                .Register(*registry_)
                .Add({})),
      total_(prom::BuildGauge()
                 .Name("takosumi_agent_slots")
                 .Help("Slots this agent has (concurrency)")
                 .Register(*registry_)
                 .Add({})),
      spool_(prom::BuildGauge()
                 .Name("takosumi_agent_spool_bytes")
                 .Help("Bytes of results in the spool waiting for delivery or for the operator")
                 .Register(*registry_)
                 .Add({})) {
  service::add_build_info(*registry_, "takosumi_agent_build_info", "The agent's version (always 1)",
                          std::string(version));
  for (auto type : kTypes)
    for (auto result : kResults)
      runs_.Add({{"type", std::string(protocol::to_string(type))}, {"result", std::string(result)}});
  for (auto phase : kPhases) phases_.Add({{"phase", std::string(phase)}}, buckets());
  for (auto c : kStatusClasses) requests_.Add({{"status", std::string(c)}});
}

void AgentMetrics::run_finished(protocol::RunType type, std::string_view result,
                                const std::map<std::string, std::int64_t>& phase_millis) {
  runs_.Add({{"type", std::string(protocol::to_string(type))}, {"result", std::string(result)}})
      .Increment();
  for (auto phase : kPhases) {
    const auto it = phase_millis.find(std::string(phase));
    if (it != phase_millis.end()) observe(phase, static_cast<double>(it->second) / 1000.0);
  }
}

void AgentMetrics::observe(std::string_view phase, double seconds) {
  phases_.Add({{"phase", std::string(phase)}}, buckets()).Observe(seconds);
}

void AgentMetrics::request(unsigned status, bool delivery) {
  requests_.Add({{"status", service::status_class(status)}}).Increment();
  if (delivery && (status == 0 || status >= 500)) delivery_retries_.Increment();
}

void AgentMetrics::slots(std::int64_t busy, std::int64_t total) {
  busy_.Set(static_cast<double>(busy));
  total_.Set(static_cast<double>(total));
}

void AgentMetrics::spool_bytes(std::uint64_t bytes) { spool_.Set(static_cast<double>(bytes)); }

}  // namespace takosumi::agent
