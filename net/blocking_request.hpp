#pragma once
// One exchange over an HttpTransport, waited for on a private io_context: for callers that do one
// request at a time and nothing else meanwhile (the CLI, tests).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "net/http_transport.hpp"

namespace takosumi::net {

inline Result<HttpResponse> request_blocking(HttpTransport& transport, HttpRequest request) {
  boost::asio::io_context io;
  auto done = boost::asio::co_spawn(io, transport.async_request(std::move(request)),
                                    boost::asio::use_future);
  io.run();
  return done.get();
}

}  // namespace takosumi::net
