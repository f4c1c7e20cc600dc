#include "bench/e2e/options.hpp"

#include <iostream>
#include <sstream>
#include <string_view>

namespace takosumi::bench {
namespace {

constexpr const char* kFigures[] = {"plan", "plan_apply", "drift", "pickup", "idle",
                                    "soak", "sigterm", "concurrent", "large", nullptr};

constexpr const char* kUsage =
    "usage: e2e_bench [--runs N] [--soak N] [--manifest-ttl SECONDS] [--large RESOURCES]\n"
    "                 [--out FILE] [--only fig,...] [--google NAME=FILE]...\n"
    "       e2e_bench --compare OLD.json NEW.json\n"
    "       e2e_bench --print RESULTS.json\n"
    "figures: plan plan_apply drift pickup idle soak sigterm concurrent large (or none);\n"
    "         large (default 10000 resources, minutes) runs only when --only names it\n";

bool known_figure(std::string_view name) {
  for (auto f = kFigures; *f; ++f)
    if (name == *f) return true;
  return false;
}

std::optional<Options> usage(const std::string& why) {
  std::cerr << "e2e_bench: " << why << "\n" << kUsage;
  return std::nullopt;
}

}  // namespace

const char* const* figure_names() { return kFigures; }

std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if ((a == "--runs" || a == "--soak" || a == "--manifest-ttl" || a == "--large") && has_value) {
      const int n = std::atoi(argv[++i]);
      if (n < 1) return usage(std::string(a) + " needs a positive number");
      (a == "--runs"   ? o.runs
       : a == "--soak" ? o.soak_runs
       : a == "--large" ? o.large_resources
                        : o.manifest_ttl_seconds) = n;
    } else if (a == "--out" && has_value) {
      o.out = argv[++i];
    } else if (a == "--only" && has_value) {
      std::stringstream list(argv[++i]);
      for (std::string name; std::getline(list, name, ',');) {
        // "none": only fold in the Google Benchmark results (scripts/bench --only google).
        if (!known_figure(name) && name != "none") return usage("unknown figure " + name);
        o.only.insert(name);
      }
    } else if (a == "--google" && has_value) {
      const std::string spec = argv[++i];
      const auto eq = spec.find('=');
      if (eq == std::string::npos) return usage("--google takes NAME=FILE");
      o.google[spec.substr(0, eq)] = spec.substr(eq + 1);
    } else if (a == "--compare" && i + 2 < argc) {
      o.compare.emplace(argv[i + 1], argv[i + 2]);
      i += 2;
    } else if (a == "--print" && has_value) {
      o.print = argv[++i];
    } else {
      return usage("unknown argument " + std::string(a));
    }
  }
  return o;
}

}  // namespace takosumi::bench
