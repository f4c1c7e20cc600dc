#pragma once
// The figures about the agent process itself (issue 13, figures 5–7): no baseline, takosumi only.
#include "bench/e2e/bench_context.hpp"
#include "bench/e2e/figure.hpp"

namespace takosumi::bench {

// VmRSS of the idle agent, once a second for 5 s after 2 s of quiet; extra.cpuPercent is its CPU
// use over those 5 s.
Result<Figure> idle_figure(BenchContext& ctx);
// ctx.soak_runs plan Runs, ctx.concurrency at a time; every 50 Runs (once the agent is idle again)
// the agent's VmRSS and the bytes under its state and work dirs. The samples are the RSS in MiB.
Result<Figure> soak_figure(BenchContext& ctx);
// SIGTERM to the idle agent → the process exited; restarts the agent after each sample.
Result<Figure> sigterm_figure(BenchContext& ctx);

}  // namespace takosumi::bench
