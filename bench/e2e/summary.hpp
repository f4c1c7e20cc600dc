#pragma once
// Order statistics of one side's samples: what the table and the JSON report per figure.
#include <cstddef>
#include <vector>

namespace takosumi::bench {

struct Summary {
  std::size_t n = 0;
  double median = 0, min = 0, max = 0, p50 = 0, p99 = 0;
};

// Percentiles by the nearest-rank method (p99 of 25 samples is the largest); empty gives n = 0.
Summary summarize(std::vector<double> samples);

}  // namespace takosumi::bench
