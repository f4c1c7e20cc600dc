#include "controlplane/store/db/postgres_sql.hpp"

#include <algorithm>
#include <cctype>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {
namespace {

bool starts_with_select(std::string_view sql) {
  const auto first = sql.find_first_not_of(" \t\r\n(");
  if (first == std::string_view::npos) return false;
  const auto word = sql.substr(first, 6);
  return word.size() == 6 && std::equal(word.begin(), word.end(), "SELECT", [](char a, char b) {
           return std::toupper(static_cast<unsigned char>(a)) == b;
         });
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

Result<PostgresSql> to_postgres_parameters(std::string_view sql) {
  PostgresSql out;
  out.read_only = starts_with_select(sql);
  out.text.reserve(sql.size() + 16);
  for (std::size_t i = 0; i < sql.size();) {
    const char c = sql[i];
    // What this scanner does not follow is refused rather than misread: a block comment (a `?`
    // inside would be taken for a parameter), a dollar-quoted string or a `$N` of its own, an
    // E'' string (whose \' does not end it).
    if ((c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') || c == '$' ||
        (c == '\'' && i > 0 && (sql[i - 1] == 'E' || sql[i - 1] == 'e') &&
         (i == 1 || !is_name_char(sql[i - 2]))))
      return fail(errc::kInternal, "postgresql: a statement uses syntax the store's SQL must not "
                                   "use (a block comment, $ or an E'' string)");
    if (c == '\'' || c == '"') {  // a literal or a quoted name; a doubled quote stays inside
      const auto end = sql.find(c, i + 1);
      if (end == std::string_view::npos)
        return fail(errc::kInternal, "postgresql: unterminated quote in a statement");
      out.text.append(sql.substr(i, end + 1 - i));
      i = end + 1;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      const auto end = std::min(sql.find('\n', i), sql.size());
      out.text.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '?') {
      std::size_t digits = i + 1;
      while (digits < sql.size() && std::isdigit(static_cast<unsigned char>(sql[digits]))) ++digits;
      int number = out.parameters + 1;
      if (digits > i + 1) {
        if (digits - i - 1 > 3 || sql[i + 1] == '0')
          return fail(errc::kInternal, "postgresql: parameter " +
                                           std::string(sql.substr(i, digits - i)) + " out of range");
        number = std::stoi(std::string(sql.substr(i + 1, digits - i - 1)));
      }
      out.parameters = std::max(out.parameters, number);
      out.text += "$" + std::to_string(number);
      i = digits;
    } else {
      out.text += c;
      ++i;
    }
  }
  return out;
}

}  // namespace takosumi::controlplane
