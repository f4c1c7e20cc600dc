#pragma once
// The command line of e2e_bench (scripts/bench passes its own options through).
#include <map>
#include <optional>
#include <set>
#include <string>

namespace takosumi::bench {

struct Options {
  int runs = 15;
  int soak_runs = 300;
  // The control plane's manifest lifetime: the agent keeps each manifest's nonce this long, so a
  // soak shows its journal level off only when it runs longer than this (default: the product's).
  int manifest_ttl_seconds = 900;
  // The resources of the `large` figure's module (one plan + apply per side); only run when
  // named in --only, it takes minutes.
  int large_resources = 10000;
  std::string out = "bench-results.json";
  std::set<std::string> only;                  // empty: every figure
  std::map<std::string, std::string> google;   // program name → its --benchmark_out JSON file
  std::optional<std::pair<std::string, std::string>> compare;  // old, new: compare, measure nothing
  std::optional<std::string> print;            // print the table of this results file only
};

// nullopt (after printing why and the usage to stderr) when argv is not understood.
std::optional<Options> parse_options(int argc, char** argv);

// The figure names in the order they run, for --only and the table.
const char* const* figure_names();

}  // namespace takosumi::bench
