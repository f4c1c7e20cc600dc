#pragma once
// Test-only: HTTP by hand for the tests that need the wire (a request written and its reply read
// on a socket of the test's own), over the fixture's Reply and Headers.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {

namespace asio = boost::asio;
namespace beast = boost::beast;

inline Reply read_reply(asio::ip::tcp::socket& socket, beast::flat_buffer& buffer) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(socket, buffer, parser);
  Reply r{parser.get().result_int(), parser.get().body(), nullptr,
          std::string(parser.get()[http::field::allow])};
  boost::system::error_code ec;
  r.json = json::parse(r.body, ec);
  return r;
}

inline http::request<http::string_body> make_request(http::verb verb, const std::string& target,
                                                     std::string body, const Headers& headers) {
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = std::move(body);
  req.prepare_payload();
  return req;
}

}  // namespace takosumi::controlplane
