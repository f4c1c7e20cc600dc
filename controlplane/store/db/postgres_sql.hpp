#pragma once
// The stores' statements as PostgreSQL reads them: SQLite's `?` and `?N` parameters numbered as
// SQLite numbers them (`?` is one more than the largest number so far) and written `$N`. Quotes,
// quoted names and comments are copied untouched. Pure, so it is tested on its own.
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::controlplane {

struct PostgresSql {
  std::string text;
  int parameters = 0;      // the largest parameter number
  bool read_only = false;  // a SELECT: needs no writer's lock outside a transaction
};

// internal for a `?N` that is not a number from 1 to 999, an unterminated quote, or what the
// scanner does not follow (a block comment, `$`, an E'' string).
Result<PostgresSql> to_postgres_parameters(std::string_view sql);

}  // namespace takosumi::controlplane
