#include "bench/e2e/report.hpp"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace takosumi::bench {
namespace json = boost::json;

namespace {

const json::object kEmpty;

const json::object& object_at(const json::object& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_object() ? it->value().get_object() : kEmpty;
}

std::string text_at(const json::object& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_string() ? std::string(it->value().get_string()) : "";
}

double number_at(const json::object& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() ? number(it->value()) : 0.0;
}

// "442.1 ms (430.0–470.2)", or "-" for a side the figure does not have.
std::string side_cell(const json::object& side, const std::string& unit) {
  if (side.empty()) return "-";
  return fixed(number_at(side, "median")) + " " + unit + " (" + fixed(number_at(side, "min")) + "–" +
         fixed(number_at(side, "max")) + ")";
}

void row(std::ostream& out, const std::string& a, const std::string& b, const std::string& c,
         const std::string& d, const std::string& e) {
  // The en dash is one column but three bytes: setw counts bytes, so pad by hand.
  auto cell = [&](const std::string& s, std::size_t width) {
    std::size_t columns = 0;
    for (unsigned char ch : s) columns += (ch & 0xC0) != 0x80;
    out << s << std::string(columns < width ? width - columns : 0, ' ');
  };
  cell(a, 44); out << " | "; cell(b, 30); out << " | "; cell(c, 30); out << " | "; cell(d, 7);
  out << " | " << e << "\n";
}

void print_details(const json::array& figures, std::ostream& out) {
  for (const auto& v : figures) {
    const auto& f = v.as_object();
    const auto name = text_at(f, "name");
    const auto& t = object_at(f, "takosumi");
    const auto& extra = object_at(f, "extra");
    if (const auto* phases = extra.if_contains("phaseMillisMedian"); phases && phases->is_object()) {
      out << name << ": the agent's phases, median ms:";
      for (const auto& [phase, ms] : phases->get_object()) out << " " << std::string(phase) << " " << fixed(number(ms), 0);
      out << "\n";
    }
    if (name == "pickup")
      out << "pickup: p50 " << fixed(number_at(t, "p50")) << " ms, p99 " << fixed(number_at(t, "p99"))
          << " ms (n " << number_at(t, "n") << ")\n";
    if (name == "idle_rss")
      out << "idle: RSS " << fixed(number_at(t, "median")) << " MiB, PSS " << fixed(number_at(extra, "pssMiB"))
          << " MiB, private (USS) " << fixed(number_at(extra, "ussMiB")) << " MiB of which heap and stacks "
          << fixed(number_at(extra, "anonMiB")) << " MiB, CPU "
          << fixed(number_at(extra, "cpuPercent"), 2) << " % over " << fixed(number_at(extra, "seconds"))
          << " s\n";
    if (name == "soak_rss" && extra.contains("samples")) {
      out << "soak (" << fixed(number_at(extra, "seconds"))
          << " s): runs → RSS, PSS, private (USS), heap and stacks KiB, bytes under state+work\n";
      for (const auto& s : extra.at("samples").as_array())
        out << "  " << std::setw(5) << number_at(s.as_object(), "runs") << " → "
            << number_at(s.as_object(), "rssKiB") << ", " << number_at(s.as_object(), "pssKiB") << ", "
            << number_at(s.as_object(), "ussKiB") << ", " << number_at(s.as_object(), "anonKiB") << " KiB, "
            << number_at(s.as_object(), "diskBytes") << " B\n";
    }
  }
}

void print_google(const json::object& google, std::ostream& out) {
  for (const auto& [program, doc] : google) {
    if (!doc.is_object() || !doc.as_object().contains("benchmarks")) continue;
    out << "\n" << std::string(program) << " (Google Benchmark)\n";
    for (const auto& b : doc.at("benchmarks").as_array()) {
      const auto& o = b.as_object();
      out << "  " << std::left << std::setw(48) << text_at(o, "name") << std::right << std::setw(12)
          << fixed(number_at(o, "real_time")) << " " << text_at(o, "time_unit");
      if (o.contains("bytes_per_second"))
        out << "  " << fixed(number_at(o, "bytes_per_second") / (1024.0 * 1024.0)) << " MiB/s";
      out << "\n";
    }
  }
}

}  // namespace

double number(const json::value& v) {
  if (v.is_double()) return v.get_double();
  if (v.is_int64()) return double(v.get_int64());
  if (v.is_uint64()) return double(v.get_uint64());
  return 0.0;
}

std::string fixed(double value, int decimals) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << value;
  return s.str();
}

std::string times(double ratio) {
  std::ostringstream s;  // not "x" + std::string: g++ 12 warns a false -Wrestrict on that
  s << "x" << fixed(ratio, 2);
  return s.str();
}

Result<json::value> read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("io", "cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  boost::system::error_code ec;
  auto doc = json::parse(ss.str(), ec);
  if (ec) return fail("io", path.string() + ": not JSON: " + ec.message());
  return doc;
}

Status write_json_file(const std::filesystem::path& path, const json::value& doc) {
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << json::serialize(doc) << "\n";
    if (!out.flush()) return fail("io", "cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return fail("io", "rename " + tmp + ": " + ec.message());
  return {};
}

void print_table(const json::object& doc, std::ostream& out) {
  const auto& machine = object_at(doc, "machine");
  out << "takosumi bench " << text_at(doc, "date") << " on " << text_at(machine, "cpu") << " ("
      << number_at(machine, "cpus") << " CPUs), tofu " << text_at(doc, "tofuVersion") << "\n\n";
  row(out, "figure", "takosumi median (min–max)", "baseline median (min–max)", "ratio", "n");
  row(out, std::string(44, '-'), std::string(30, '-'), std::string(30, '-'), std::string(7, '-'), "--");
  const auto figures = doc.contains("figures") ? doc.at("figures").as_array() : json::array{};
  for (const auto& v : figures) {
    const auto& f = v.as_object();
    const auto unit = text_at(f, "unit");
    const auto& t = object_at(f, "takosumi");
    const std::string ratio = f.contains("ratio") ? times(number_at(f, "ratio")) : "-";
    row(out, text_at(f, "title"), side_cell(t, unit), side_cell(object_at(f, "baseline"), unit), ratio,
        fixed(number_at(t, "n"), 0));
  }
  out << "\n";
  print_details(figures, out);
  print_google(object_at(doc, "googleBenchmark"), out);
  if (doc.contains("errors"))
    for (const auto& e : doc.at("errors").as_array()) out << "NOT MEASURED: " << json::serialize(e) << "\n";
}

}  // namespace takosumi::bench
