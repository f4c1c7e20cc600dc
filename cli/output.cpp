#include "cli/output.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <ctime>
#include <iostream>

namespace takosumi::cli {

void Output::print_json(const boost::json::value& v) const {
  std::cout << boost::json::serialize(v) << "\n";
}

void Output::table(const std::vector<std::string>& headers,
                   const std::vector<std::vector<std::string>>& rows) const {
  std::vector<std::size_t> width(headers.size());
  for (std::size_t c = 0; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      std::string cell = cells[c];
      if (c + 1 < cells.size()) cell.resize(width[c] + 2, ' ');
      out += cell;
    }
    std::cout << (header ? bold(out) : out) << "\n";
  };
  line(headers, true);
  for (const auto& row : rows) line(row, false);
}

void Output::status_line(const std::string& text) const {
  if (terminal_) {
    std::cerr << "\r\033[K" << text << std::flush;
    line_open_ = true;
  } else {
    std::cerr << text << "\n";
  }
}

void Output::end_status_line() const {
  if (line_open_) std::cerr << "\n";
  line_open_ = false;
}

std::string Output::paint(std::string_view code, std::string_view s) const {
  if (!color_) return std::string(s);
  return "\033[" + std::string(code) + "m" + std::string(s) + "\033[0m";
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      ++i;
      continue;
    }
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) continue;
    out += static_cast<char>(c);
  }
  return out;
}

void print_error(const Error& e) {
  std::cerr << "takosumi: " << printable(e.code) << ": " << printable(e.message) << "\n";
}

std::string text_of(const boost::json::value& v) {
  if (v.is_string()) return printable(v.as_string());
  if (v.is_null()) return "-";
  return boost::json::serialize(v);
}

std::string field(const boost::json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it == o.end() ? "-" : text_of(it->value());
}

std::string time_text(const boost::json::value& v) {
  // The API answers RFC 3339 (UTC); seconds are what a control plane from before that gave.
  if (v.is_string()) return printable(v.get_string());
  if (!v.is_int64()) return "-";
  const std::time_t t = static_cast<std::time_t>(v.as_int64());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

}  // namespace takosumi::cli
