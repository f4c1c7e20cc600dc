#pragma once
// What every figure needs: both sides, the module, and how many samples to take.
#include <iosfwd>
#include <string>

#include "bench/e2e/bare_tofu.hpp"
#include "bench/e2e/takosumi_side.hpp"
#include "tests/support/stack.hpp"

namespace takosumi::bench {

struct BenchContext {
  testing::Stack& stack;
  TakosumiSide& takosumi;
  BareTofu& bare;
  std::string module_text;
  int runs = 15;        // samples per side and figure
  int soak_runs = 300;  // Runs in the soak
  int concurrency = 4;  // the agent's concurrency, and xargs -P
  int large_resources = 10000;  // the `large` figure's module
  std::ostream& progress;
};

}  // namespace takosumi::bench
