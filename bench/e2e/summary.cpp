#include "bench/e2e/summary.hpp"

#include <algorithm>
#include <cmath>

namespace takosumi::bench {
namespace {

double nearest_rank(const std::vector<double>& sorted, double percent) {
  const auto rank = static_cast<std::size_t>(std::ceil(percent / 100.0 * double(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  const std::size_t mid = s.n / 2;
  s.median = s.n % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
  s.p50 = nearest_rank(samples, 50);
  s.p99 = nearest_rank(samples, 99);
  return s;
}

}  // namespace takosumi::bench
