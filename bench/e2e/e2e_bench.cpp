// End-to-end benchmark driver (issue 13): takosumi against bare OpenTofu, interleaved, in one
// invocation; or the comparison of two results files. Run it through scripts/bench.
#include <iostream>

#include "bench/e2e/bench_runner.hpp"
#include "bench/e2e/options.hpp"
#include "bench/e2e/report.hpp"

namespace {

namespace bench = takosumi::bench;

int compare(const std::string& old_file, const std::string& new_file) {
  auto before = bench::read_json_file(old_file);
  auto after = bench::read_json_file(new_file);
  if (!before || !after || !before->is_object() || !after->is_object()) {
    std::cerr << "e2e_bench: --compare needs two results files\n";
    return 2;
  }
  std::cout << "change from " << old_file << " to " << new_file << "\n\n";
  bench::print_comparison(before->as_object(), after->as_object(), std::cout);
  return 0;
}

int print(const std::string& file) {
  auto doc = bench::read_json_file(file);
  if (!doc || !doc->is_object()) {
    std::cerr << "e2e_bench: " << (doc ? file + ": not an object" : doc.error().message) << "\n";
    return 2;
  }
  bench::print_table(doc->as_object(), std::cout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto options = bench::parse_options(argc, argv);
  if (!options) return 2;
  if (options->compare) return compare(options->compare->first, options->compare->second);
  if (options->print) return print(*options->print);
  try {
    const auto doc = bench::run_bench(*options, std::cerr);
    if (auto written = bench::write_json_file(options->out, doc); !written) {
      std::cerr << "e2e_bench: " << written.error().message << "\n";
      return 1;
    }
    std::cout << "\n";
    bench::print_table(doc, std::cout);
    std::cout << "\nresults: " << options->out << "\n";
    return doc.contains("errors") ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "e2e_bench: " << e.what() << "\n";
    return 1;
  }
}
