#pragma once
// How the CLI prints: JSON for scripts (--output json: the API's answer as it came), or text for
// a person, with color and a live status line only when stdout is a terminal (and NO_COLOR is
// not set).
#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace takosumi::cli {

class Output {
 public:
  Output(bool json, bool terminal, bool color) : json_(json), terminal_(terminal), color_(color) {}
  bool json() const { return json_; }
  bool terminal() const { return terminal_; }
  bool colour() const { return color_; }

  void print_json(const boost::json::value& v) const;
  // Columns padded to their widest cell.
  void table(const std::vector<std::string>& headers,
             const std::vector<std::vector<std::string>>& rows) const;
  // One status line, replaced in place on a terminal, a plain line otherwise.
  void status_line(const std::string& text) const;
  void end_status_line() const;
  std::string bold(std::string_view s) const { return paint("1", s); }
  std::string red(std::string_view s) const { return paint("31", s); }
  std::string yellow(std::string_view s) const { return paint("33", s); }
  std::string green(std::string_view s) const { return paint("32", s); }

 private:
  std::string paint(std::string_view code, std::string_view s) const;
  bool json_;
  bool terminal_;
  bool color_;
  mutable bool line_open_ = false;
};

// Text from the control plane (log chunks written by modules and providers, names agents chose,
// messages) without terminal control: C0 controls but newline and tab, DEL, and C1 controls
// (UTF-8 C2 80–9F) are dropped, so no answer can move the cursor, retitle or rewrite the screen.
std::string printable(std::string_view text);

// "takosumi: <code>: <message>" on stderr.
void print_error(const Error& e);

// A JSON field as display text: strings bare, null as "-", anything else serialized.
std::string text_of(const boost::json::value& v);
std::string field(const boost::json::object& o, std::string_view key);
// A time as the API gives it ("2026-12-03T14:05:09Z"; unix seconds from an older control plane
// as "2026-12-03 14:05:09Z"), or "-".
std::string time_text(const boost::json::value& v);

}  // namespace takosumi::cli
