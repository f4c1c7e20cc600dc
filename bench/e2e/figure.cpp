#include "bench/e2e/figure.hpp"

#include "bench/e2e/summary.hpp"

namespace takosumi::bench {
namespace {

boost::json::object side_json(const std::vector<double>& samples) {
  const Summary s = summarize(samples);
  boost::json::array raw(samples.begin(), samples.end());
  return {{"n", s.n},        {"median", s.median}, {"min", s.min},      {"max", s.max},
          {"p50", s.p50},    {"p99", s.p99},       {"samples", std::move(raw)}};
}

}  // namespace

boost::json::object to_json(const Figure& figure) {
  boost::json::object o{{"name", figure.name},
                        {"title", figure.title},
                        {"unit", figure.unit},
                        {"goal", figure.goal},
                        {"takosumi", side_json(figure.takosumi)}};
  if (!figure.baseline.empty()) {
    o["baseline"] = side_json(figure.baseline);
    const double base = summarize(figure.baseline).median;
    o["ratio"] = base > 0 ? summarize(figure.takosumi).median / base : 0.0;
  }
  if (!figure.extra.empty()) o["extra"] = figure.extra;
  return o;
}

}  // namespace takosumi::bench
