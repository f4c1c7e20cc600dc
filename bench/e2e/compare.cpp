#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "bench/e2e/report.hpp"

namespace takosumi::bench {
namespace json = boost::json;

namespace {

// name → figure object, for matching old to new.
std::map<std::string, json::object> by_name(const json::object& doc, const char* list_key,
                                            const char* name_key) {
  std::map<std::string, json::object> out;
  auto it = doc.find(list_key);
  if (it == doc.end() || !it->value().is_array()) return out;
  for (const auto& v : it->value().get_array())
    if (v.is_object() && v.as_object().contains(name_key) && v.as_object().at(name_key).is_string())
      out[std::string(v.as_object().at(name_key).get_string())] = v.as_object();
  return out;
}

double median_of(const json::object& figure, const char* side) {
  auto it = figure.find(side);
  if (it == figure.end() || !it->value().is_object()) return 0.0;
  auto m = it->value().get_object().find("median");
  return m == it->value().get_object().end() ? 0.0 : number(m->value());
}

double ratio_of(const json::object& figure) {
  auto it = figure.find("ratio");
  return it == figure.end() ? 0.0 : number(it->value());
}

// "+12.3 %" (worse when a time grows), "-" when either side is missing.
std::string change(double before, double after) {
  if (before <= 0 || after <= 0) return "-";
  const double pct = 100.0 * (after - before) / before;
  // Appended piecewise: `"+" + std::string` draws a false -Wrestrict from g++ 12.
  std::string out = pct >= 0 ? "+" : "";
  out += fixed(pct);
  out += " %";
  return out;
}

std::string ratios(double before, double after, const std::string& baseline_change) {
  std::ostringstream s;
  s << times(before) << " -> " << times(after) << " (baseline " << baseline_change << ")";
  return s.str();
}

void line(std::ostream& out, const std::string& name, const std::string& old_v, const std::string& new_v,
          const std::string& delta, const std::string& ratios) {
  out << std::left << std::setw(44) << name << " | " << std::setw(14) << old_v << " | " << std::setw(14)
      << new_v << " | " << std::setw(10) << delta << " | " << ratios << std::right << "\n";
}

}  // namespace

void print_comparison(const json::object& old_doc, const json::object& new_doc, std::ostream& out) {
  auto old_figures = by_name(old_doc, "figures", "name");
  line(out, "figure (takosumi median)", "old", "new", "change", "ratio to baseline old -> new");
  line(out, std::string(44, '-'), std::string(14, '-'), std::string(14, '-'), std::string(10, '-'), "--");
  // In the new document's order (the table's), not by name.
  const auto new_list = new_doc.contains("figures") && new_doc.at("figures").is_array()
                            ? new_doc.at("figures").get_array()
                            : json::array{};
  for (const auto& v : new_list) {
    if (!v.is_object() || !v.as_object().contains("name")) continue;
    const auto& figure = v.as_object();
    const std::string name(figure.at("name").as_string());
    const auto unit = figure.contains("unit") ? std::string(figure.at("unit").as_string()) : "";
    auto old = old_figures.find(name);
    if (old == old_figures.end()) {
      line(out, name, "(none)", fixed(median_of(figure, "takosumi")) + " " + unit, "-", "");
      continue;
    }
    const double before = median_of(old->second, "takosumi"), after = median_of(figure, "takosumi");
    const double r0 = ratio_of(old->second), r1 = ratio_of(figure);
    // The baseline's own change tells a slower machine from a slower takosumi.
    const std::string base_change = change(median_of(old->second, "baseline"), median_of(figure, "baseline"));
    line(out, name, fixed(before) + " " + unit, fixed(after) + " " + unit, change(before, after),
         r1 > 0 ? ratios(r0, r1, base_change) : "");
  }
  auto google = [](const json::object& doc) -> json::object {
    auto it = doc.find("googleBenchmark");
    return it != doc.end() && it->value().is_object() ? it->value().get_object() : json::object{};
  };
  const auto old_google = google(old_doc);
  for (const auto& [program, doc] : google(new_doc)) {
    if (!doc.is_object() || !old_google.contains(program) || !old_google.at(program).is_object()) continue;
    out << "\n" << std::string(program) << " (real_time)\n";
    auto before = by_name(old_google.at(program).as_object(), "benchmarks", "name");
    for (const auto& [name, b] : by_name(doc.as_object(), "benchmarks", "name")) {
      auto o = before.find(name);
      const double t1 = number(b.at("real_time"));
      const double t0 = o == before.end() ? 0.0 : number(o->second.at("real_time"));
      line(out, name, o == before.end() ? "(none)" : fixed(t0), fixed(t1), change(t0, t1), "");
    }
  }
}

}  // namespace takosumi::bench
