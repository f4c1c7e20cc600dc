#include "tests/support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace takosumi::testing {
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

JsonResponse HttpClient::request(const std::string& method, const std::string& target,
                                 const std::string& body, const Headers& headers) const {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(std::chrono::seconds(60));
  stream.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port_));
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, "127.0.0.1");
  if (!bearer_.empty()) req.set(http::field::authorization, "Bearer " + bearer_);
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(stream, buffer, parser);
  JsonResponse out;
  out.status = parser.get().result_int();
  out.body = parser.get().body();
  boost::system::error_code ec;
  out.json = boost::json::parse(out.body, ec);
  if (ec) out.json = nullptr;
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return out;
}

}  // namespace takosumi::testing
