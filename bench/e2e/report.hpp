#pragma once
// Reading, writing and printing a results document (the JSON scripts/bench writes).
#include <boost/json.hpp>

#include <filesystem>
#include <iosfwd>

#include "common/error.hpp"

namespace takosumi::bench {

Result<boost::json::value> read_json_file(const std::filesystem::path& path);
Status write_json_file(const std::filesystem::path& path, const boost::json::value& doc);

// figure | takosumi median (min–max) | baseline median (min–max) | ratio | n, then the details
// (pickup percentiles, idle CPU, soak samples) and the Google Benchmark results.
void print_table(const boost::json::object& doc, std::ostream& out);

// The change of every figure and Google benchmark present in both documents.
void print_comparison(const boost::json::object& old_doc, const boost::json::object& new_doc,
                      std::ostream& out);

// "12.3" for 12.34; numbers in the table need no more.
std::string fixed(double value, int decimals = 1);
// "x1.76" for a ratio of 1.764.
std::string times(double ratio);
// A JSON number of any kind as a double (0 when it is not a number).
double number(const boost::json::value& v);

}  // namespace takosumi::bench
