#pragma once
// The figures that time Runs against bare OpenTofu (issue 13, figures 1–4 and 8). Each takes one
// untimed warm-up per side, then ctx.runs samples per side, interleaved A, B, A, B.
#include "bench/e2e/bench_context.hpp"
#include "bench/e2e/figure.hpp"

namespace takosumi::bench {

Result<Figure> plan_figure(BenchContext& ctx);
Result<Figure> plan_apply_figure(BenchContext& ctx);
Result<Figure> drift_figure(BenchContext& ctx);
// Takosumi only: enqueue (POST) → the API shows the Run claimed; 3 × runs samples (at least 40).
Result<Figure> pickup_figure(BenchContext& ctx);
// 2 × concurrency plan Runs at once vs xargs -P<concurrency> of the bare plan sequence.
Result<Figure> concurrent_figure(BenchContext& ctx);
// One plan + apply of a module of ctx.large_resources resources per side (no warm-up: a
// sample takes minutes): large plans work end to end, and what they cost beside bare tofu.
Result<Figure> large_figure(BenchContext& ctx);

}  // namespace takosumi::bench
