#pragma once
// Errors flow as values. An Error carries a stable machine code (see error_codes.hpp) and a
// human message that each layer prefixes with its context ("checkout <url>: fetch: ...").
#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace takosumi {

struct Error {
  std::string code;
  std::string message;

  // Returns the same error with "context: " prepended to the message; the code is kept.
  [[nodiscard]] Error with_context(std::string_view context) const {
    return Error{code, std::string(context) + ": " + message};
  }
  [[nodiscard]] std::string to_string() const { return code + ": " + message; }
};

template <class T>
using Result = std::expected<T, Error>;

using Status = std::expected<void, Error>;

inline std::unexpected<Error> fail(std::string_view code, std::string message) {
  return std::unexpected(Error{std::string(code), std::move(message)});
}

// Prefixes the error of a failed result with context; passes success through untouched.
template <class T>
Result<T> with_context(Result<T> r, std::string_view context) {
  if (!r) return std::unexpected(r.error().with_context(context));
  return r;
}

// The first error among results read side by side (several fields of one object, each reported
// alone), or nullptr when every one succeeded:
//   if (const Error* e = first_error(address, type)) return std::unexpected(*e);
template <class... Results>
const Error* first_error(const Results&... results) {
  const Error* found = nullptr;
  ((found = found != nullptr ? found : (results ? nullptr : &results.error())), ...);
  return found;
}

}  // namespace takosumi

// Propagates the error of an expression yielding Result<T>/Status; usable in functions
// returning any Result<U>.
#define TAKOSUMI_TRY(expr)                                      \
  do {                                                          \
    if (auto takosumi_try_r_ = (expr); !takosumi_try_r_)        \
      return std::unexpected(std::move(takosumi_try_r_.error())); \
  } while (0)

// TAKOSUMI_TRY for coroutines (co_return instead of return).
#define TAKOSUMI_CO_TRY(expr)                                      \
  do {                                                             \
    if (auto takosumi_try_r_ = (expr); !takosumi_try_r_)           \
      co_return std::unexpected(std::move(takosumi_try_r_.error())); \
  } while (0)
