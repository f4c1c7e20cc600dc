#include "agent/beast_transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>

#include "common/error_codes.hpp"
#include "common/version.hpp"

namespace takosumi::agent {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

Error transport_error(std::string_view step, const HttpRequest& req, const boost::system::error_code& ec) {
  return Error{std::string(errc::kUnavailable),
               req.method + " " + req.target + ": " + std::string(step) + ": " + ec.message()};
}

template <class Body>
void fill_headers(http::request<Body>& r, const HttpRequest& req, const std::string& host) {
  r.method_string(req.method);
  r.target(req.target);
  r.version(11);
  r.set(http::field::host, host);
  r.set(http::field::user_agent, "takosumi-agent/" TAKOSUMI_VERSION);
  for (const auto& [k, v] : req.headers) r.set(k, v);
}

// Sends the request with a string or file body.
asio::awaitable<boost::system::error_code> send(beast::tcp_stream& stream, const HttpRequest& req,
                                                const std::string& host) {
  if (req.body_file) {
    http::request<http::file_body> r;
    fill_headers(r, req, host);
    boost::system::error_code ec;
    r.body().open(req.body_file->c_str(), beast::file_mode::scan, ec);
    if (ec) co_return ec;
    r.set(http::field::content_type, "application/octet-stream");
    r.prepare_payload();
    auto [wec, n] = co_await http::async_write(stream, r, kTuple);
    co_return wec;
  }
  http::request<http::string_body> r;
  fill_headers(r, req, host);
  r.body() = req.body;
  if (!req.body.empty()) r.set(http::field::content_type, "application/json");
  r.prepare_payload();
  auto [wec, n] = co_await http::async_write(stream, r, kTuple);
  co_return wec;
}

// Reads a response; 2xx bodies go to response_file when requested, everything else to a string.
asio::awaitable<Result<HttpResponse>> receive(beast::tcp_stream& stream, const HttpRequest& req) {
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> head;
  head.body_limit(req.response_limit);
  auto [ec, n] = co_await http::async_read_header(stream, buffer, head, kTuple);
  if (ec) co_return std::unexpected(transport_error("read header", req, ec));
  const unsigned status = head.get().result_int();
  if (req.response_file && status / 100 == 2) {
    http::response_parser<http::file_body> parser(std::move(head));
    parser.body_limit(req.response_limit);
    boost::system::error_code fec;
    parser.get().body().open(req.response_file->c_str(), beast::file_mode::write, fec);
    if (fec) co_return std::unexpected(transport_error("open " + req.response_file->string(), req, fec));
    auto [rec, m] = co_await http::async_read(stream, buffer, parser, kTuple);
    if (rec) co_return std::unexpected(transport_error("read body", req, rec));
    co_return HttpResponse{status, {}};
  }
  http::response_parser<http::string_body> parser(std::move(head));
  parser.body_limit(std::min<std::size_t>(req.response_limit, 1 << 20));
  auto [rec, m] = co_await http::async_read(stream, buffer, parser, kTuple);
  if (rec) co_return std::unexpected(transport_error("read body", req, rec));
  co_return HttpResponse{status, std::move(parser.get().body())};
}

}  // namespace

Result<BeastTransport> BeastTransport::make(const std::string& base_url) {
  auto url = boost::urls::parse_absolute_uri(base_url);
  if (!url || url->scheme() != "http" || url->host().empty())
    return fail(errc::kConfigInvalid,
                "control plane URL \"" + base_url + "\" must look like http://host:port");
  std::string port = url->has_port() ? std::string(url->port()) : "80";
  return BeastTransport(std::string(url->host()), port);
}

asio::awaitable<Result<HttpResponse>> BeastTransport::async_request(HttpRequest req) {
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  auto [rec, endpoints] = co_await resolver.async_resolve(host_, port_, kTuple);
  if (rec) co_return std::unexpected(transport_error("resolve " + host_, req, rec));
  beast::tcp_stream stream(ex);
  stream.expires_after(req.timeout);
  auto [cec, ep] = co_await stream.async_connect(endpoints, kTuple);
  if (cec) co_return std::unexpected(transport_error("connect " + host_ + ":" + port_, req, cec));
  if (auto wec = co_await send(stream, req, host_ + ":" + port_))
    co_return std::unexpected(transport_error("write", req, wec));
  auto response = co_await receive(stream, req);
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  co_return response;
}

}  // namespace takosumi::agent
