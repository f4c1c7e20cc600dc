#include "net/beast_transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "common/error_codes.hpp"
#include "common/version.hpp"
#include "net/tls_failure.hpp"

namespace takosumi::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

SSL* native(beast::tcp_stream&) { return nullptr; }
SSL* native(TlsStream& s) { return s.native_handle(); }

// One exchange's failures: TLS ones by what the operator must fix, others as unavailable.
class Failure {
 public:
  Failure(const HttpRequest& req, std::string where) : req_(req), where_(std::move(where)) {}
  Error operator()(std::string_view step, const boost::system::error_code& ec, SSL* ssl) const {
    if (auto tls = tls_failure(ec, ssl, where_)) return *tls;
    return Error{std::string(errc::kUnavailable),
                 req_.method + " " + req_.target + ": " + std::string(step) + ": " + ec.message()};
  }

 private:
  const HttpRequest& req_;
  std::string where_;
};

template <class Body>
void fill_headers(http::request<Body>& r, const HttpRequest& req, const std::string& host,
                  const std::string& user_agent) {
  r.method_string(req.method);
  r.target(req.target);
  r.version(11);
  r.set(http::field::host, host);
  r.set(http::field::user_agent, user_agent);
  for (const auto& [k, v] : req.headers) r.set(k, v);
}

// Sends the request with a string or file body.
template <class Stream>
asio::awaitable<boost::system::error_code> send(Stream& stream, const HttpRequest& req,
                                                const std::string& host,
                                                const std::string& user_agent) {
  if (req.body_file) {
    http::request<http::file_body> r;
    fill_headers(r, req, host, user_agent);
    boost::system::error_code ec;
    r.body().open(req.body_file->c_str(), beast::file_mode::scan, ec);
    if (ec) co_return ec;
    r.set(http::field::content_type, "application/octet-stream");
    r.prepare_payload();
    auto [wec, n] = co_await http::async_write(stream, r, kTuple);
    co_return wec;
  }
  http::request<http::string_body> r;
  fill_headers(r, req, host, user_agent);
  r.body() = req.body;
  if (!req.body.empty()) r.set(http::field::content_type, "application/json");
  r.prepare_payload();
  auto [wec, n] = co_await http::async_write(stream, r, kTuple);
  co_return wec;
}

// Reads a response; 2xx bodies go to response_file when requested, everything else to a string.
template <class Stream>
asio::awaitable<Result<HttpResponse>> receive(Stream& stream, const HttpRequest& req,
                                              const Failure& failure) {
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> head;
  head.body_limit(req.response_limit);
  auto [ec, n] = co_await http::async_read_header(stream, buffer, head, kTuple);
  if (ec) co_return std::unexpected(failure("read header", ec, native(stream)));
  const unsigned status = head.get().result_int();
  if (req.response_file && status / 100 == 2) {
    http::response_parser<http::file_body> parser(std::move(head));
    parser.body_limit(req.response_limit);
    boost::system::error_code fec;
    parser.get().body().open(req.response_file->c_str(), beast::file_mode::write, fec);
    if (fec) co_return std::unexpected(failure("open " + req.response_file->string(), fec, nullptr));
    auto [rec, m] = co_await http::async_read(stream, buffer, parser, kTuple);
    if (rec) co_return std::unexpected(failure("read body", rec, native(stream)));
    co_return HttpResponse{status, {}};
  }
  http::response_parser<http::string_body> parser(std::move(head));
  // A refusal of a file download is small: the file's limit is not the memory's.
  parser.body_limit(req.response_file ? std::min<std::size_t>(req.response_limit, 1 << 20)
                                      : req.response_limit);
  auto [rec, m] = co_await http::async_read(stream, buffer, parser, kTuple);
  if (rec) co_return std::unexpected(failure("read body", rec, native(stream)));
  co_return HttpResponse{status, std::move(parser.get().body())};
}

template <class Stream>
asio::awaitable<Result<HttpResponse>> exchange(Stream& stream, const HttpRequest& req,
                                               const ControlUrl& url, const std::string& agent,
                                               const Failure& failure) {
  if (auto ec = co_await send(stream, req, url.authority(), agent))
    co_return std::unexpected(failure("write", ec, native(stream)));
  co_return co_await receive(stream, req, failure);
}

// SNI and the host name (or IP address) the certificate must be issued for, matched against its
// subjectAltNames only (never a subject CN). False when OpenSSL did not take it: then nothing
// would check the name, so the caller does not connect.
bool expect_host(SSL* ssl, const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  if (!ec) return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS |
                             X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
  return SSL_set_tlsext_host_name(ssl, host.c_str()) == 1 && SSL_set1_host(ssl, host.c_str()) == 1;
}

}  // namespace

Result<BeastTransport> BeastTransport::make(const std::string& base_url, const Options& options) {
  auto url = parse_control_url(base_url, options.url_key);
  if (!url) return std::unexpected(url.error());
  TAKOSUMI_TRY(check_plain_http(url->tls, url->host, options.allow_insecure_http, options.url_key,
                                options.allow_key));
  TlsContext tls;
  if (url->tls) {
    auto ctx = make_client_context(options.tls);
    if (!ctx) return std::unexpected(ctx.error());
    tls = std::move(*ctx);
  }
  std::string agent = options.user_agent.empty() ? "takosumi-agent/" TAKOSUMI_VERSION
                                                 : options.user_agent;
  return BeastTransport(std::move(*url), std::move(tls), std::move(agent),
                        options.allow_insecure_http);
}

asio::awaitable<Result<HttpResponse>> BeastTransport::async_request(HttpRequest req) {
  const Failure failure(req, url_.authority());
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  auto [rec, endpoints] = co_await resolver.async_resolve(url_.host, url_.port, kTuple);
  if (rec) co_return std::unexpected(failure("resolve " + url_.host, rec, nullptr));
  beast::tcp_stream tcp(ex);
  tcp.expires_after(req.timeout);
  auto [cec, ep] = co_await tcp.async_connect(endpoints, kTuple);
  if (cec) co_return std::unexpected(failure("connect " + url_.authority(), cec, nullptr));
  boost::system::error_code ignored;
  // A request goes out in more than one write (head, body; TLS records): with Nagle's algorithm
  // the last short segment waits for the peer's delayed ACK, 40 ms on Linux, on every exchange.
  tcp.socket().set_option(tcp::no_delay(true), ignored);
  // A loopback name is judged again by the address it reached: tokens never go out in clear
  // because a resolver said "localhost" is elsewhere.
  if (!tls_ && !allow_insecure_http_ && !ep.address().is_loopback())
    co_return fail(errc::kConfigInvalid, url_.authority() + " resolved to " +
                                             ep.address().to_string() + ", which is not loopback: "
                                             "plain http would send tokens in clear; use https");
  if (!tls_) {
    auto response = co_await exchange(tcp, req, url_, user_agent_, failure);
    tcp.socket().shutdown(tcp::socket::shutdown_both, ignored);
    co_return response;
  }
  TlsStream stream(std::move(tcp), *tls_);
  if (!expect_host(stream.native_handle(), url_.host))
    co_return fail(errc::kTlsHandshakeFailed, url_.authority() + ": cannot set the host name to "
                                              "verify (" + url_.host + ")");
  auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::client, kTuple);
  // A server that closes during the handshake is most likely not speaking TLS on that port.
  if (hec == asio::ssl::error::stream_truncated)
    co_return fail(errc::kTlsHandshakeFailed,
                   url_.authority() + ": the server closed the connection during the TLS "
                                      "handshake; check that the URL names its HTTPS port");
  if (hec) co_return std::unexpected(failure("TLS handshake", hec, stream.native_handle()));
  auto response = co_await exchange(stream, req, url_, user_agent_, failure);
  // No close_notify round trip: the response was read to its end, so nothing can be truncated.
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  co_return response;
}

}  // namespace takosumi::net
