#pragma once
// Runs one coroutine to its end on an io_context: the one helper every asynchronous test uses.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <optional>
#include <utility>

namespace takosumi::testing {

// Runs one coroutine on io until it completes and returns its value.
template <class T>
T run_to_end(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  std::optional<T> out;
  std::exception_ptr error;
  boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    error = e;
    if (!e) out.emplace(std::move(value));
  });
  io.restart();
  io.run();
  if (error) std::rethrow_exception(error);
  return std::move(*out);
}

}  // namespace takosumi::testing
