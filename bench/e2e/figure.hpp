#pragma once
// One measured figure: takosumi's samples and, when the figure has one, the baseline's, taken
// interleaved in the same invocation so that machine noise falls on both sides alike.
#include <boost/json.hpp>

#include <string>
#include <vector>

namespace takosumi::bench {

struct Figure {
  std::string name;   // stable key in the JSON (--compare matches on it)
  std::string title;  // what the table shows
  std::string unit;   // "ms", "MiB", "%"
  std::string goal;   // the target from docs/performance.md, as text
  std::vector<double> takosumi;
  std::vector<double> baseline;  // empty: the figure has no baseline
  boost::json::object extra;     // figure-specific detail (soak samples, p50/p99, ...)
};

boost::json::object to_json(const Figure& figure);

}  // namespace takosumi::bench
