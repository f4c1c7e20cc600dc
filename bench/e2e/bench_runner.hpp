#pragma once
// Measures the selected figures against a fresh stack and bare OpenTofu and returns the results
// document (figures, machine, date, tofu version, the folded-in Google Benchmark JSON, and under
// "errors" each figure that could not be measured and why). Throws std::exception when the stack or
// the baseline's directory cannot be set up at all (main() reports it).
#include <boost/json.hpp>

#include <iosfwd>

#include "bench/e2e/options.hpp"

namespace takosumi::bench {

boost::json::object run_bench(const Options& options, std::ostream& progress);

}  // namespace takosumi::bench
