#include "bench/e2e/bench_runner.hpp"

#include <functional>
#include <map>
#include <stdexcept>
#include <ostream>

#include "bench/e2e/agent_figures.hpp"
#include "bench/e2e/bench_module.hpp"
#include "bench/e2e/machine.hpp"
#include "bench/e2e/report.hpp"
#include "bench/e2e/run_figures.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::bench {
namespace json = boost::json;

namespace {

using FigureFn = std::function<Result<Figure>(BenchContext&)>;

// Each figure's function by name; figure_names() gives the order they run in.
const std::map<std::string, FigureFn>& figure_table() {
  static const std::map<std::string, FigureFn> table{
      {"plan", plan_figure},       {"plan_apply", plan_apply_figure}, {"drift", drift_figure},
      {"pickup", pickup_figure},   {"idle", idle_figure},             {"soak", soak_figure},
      {"sigterm", sigterm_figure}, {"concurrent", concurrent_figure}, {"large", large_figure}};
  return table;
}

// `large` takes minutes: only when asked for by name.
bool selected(const Options& options, const std::string& name) {
  if (name == "large") return options.only.contains(name);
  return options.only.empty() || options.only.contains(name);
}

// The benchmarks and the context that describes the machine; the executable's path and the
// load average say nothing to a later --compare and would tie the file to this machine.
json::object google_results(const Options& options) {
  json::object out;
  for (const auto& [program, file] : options.google) {
    auto doc = read_json_file(file);
    if (!doc || !doc->is_object() || !doc->as_object().contains("benchmarks")) {
      out[program] = json::object{{"error", doc ? file + ": no benchmarks" : doc.error().message}};
      continue;
    }
    json::object context;
    if (const auto* c = doc->as_object().if_contains("context"); c && c->is_object())
      for (const char* key : {"date", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled", "library_build_type"})
        if (const auto* v = c->as_object().if_contains(key)) context[key] = *v;
    out[program] = json::object{{"context", context}, {"benchmarks", doc->at("benchmarks")}};
  }
  return out;
}

}  // namespace

json::object run_bench(const Options& options, std::ostream& progress) {
  const int concurrency = 4;
  json::object doc{{"schema", 1},
                   {"date", utc_now()},
                   {"machine", machine_json()},
                   {"tofuVersion", tofu_version(test_paths::tofu)},
                   {"runs", options.runs},
                   {"soakRuns", options.soak_runs},
                   {"manifestTtlSeconds", options.manifest_ttl_seconds},
                   {"largeResources", options.large_resources}};
  json::array figures, errors;
  bool any = false;
  for (auto name = figure_names(); *name; ++name) any = any || selected(options, *name);
  if (any) {
    testing::Stack stack(testing::StackOptions{
        .concurrency = concurrency, .manifest_ttl_seconds = options.manifest_ttl_seconds});
    if (stack.port() == 0 || stack.workspace_id().empty())
      throw std::runtime_error("the stack did not start (the harness printed why above)");
    testing::TempDir bare_root("takosumi-bench-bare-");
    auto bare = BareTofu::create(test_paths::tofu, test_paths::provider_mirror, bare_root.path());
    if (!bare) throw std::runtime_error(bare.error().to_string());
    TakosumiSide takosumi(stack, bench_module());
    BenchContext ctx{stack,        takosumi,    *bare,       bench_module(),
                     options.runs, options.soak_runs, concurrency, options.large_resources,
                     progress};
    for (auto name = figure_names(); *name; ++name) {
      if (!selected(options, *name)) continue;
      auto figure = figure_table().at(*name)(ctx);
      if (figure) {
        figures.push_back(to_json(*figure));
      } else {
        progress << "\n" << *name << ": " << figure.error().to_string() << "\n";
        errors.push_back(json::object{{"figure", *name}, {"error", figure.error().to_string()}});
      }
    }
  }
  doc["figures"] = std::move(figures);
  if (!errors.empty()) doc["errors"] = std::move(errors);
  doc["googleBenchmark"] = google_results(options);
  return doc;
}

}  // namespace takosumi::bench
