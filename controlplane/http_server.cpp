#include "controlplane/http_server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <list>

#include "common/error_codes.hpp"
#include "controlplane/ids.hpp"

namespace takosumi::controlplane {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using namespace std::chrono_literals;

constexpr auto kIdleTimeout = 75s;
constexpr auto kBodyTimeout = 300s;
constexpr auto kWriteTimeout = 300s;
constexpr std::uint32_t kHeaderLimit = 16 * 1024;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void log_stray_exception(std::exception_ptr e, const char* what) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::error("bug: {} ended with an exception: {}", what, ex.what());
  } catch (...) {
    spdlog::error("bug: {} ended with an unknown exception", what);
  }
}

struct Session {
  beast::tcp_stream stream;
  bool idle = true;
};

struct Exchange {
  HttpResponse response;
  bool keep_alive = false;
  bool body_unread = false;  // answered before reading the body: close gently (see linger)
};

}  // namespace

struct HttpServer::Impl {
  Impl(asio::io_context& io_, HttpHandler& handler_, std::filesystem::path temp)
      : io(io_), handler(handler_), temp_dir(std::move(temp)), acceptor(io_) {}

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> run_session(tcp::socket socket);
  asio::awaitable<std::optional<Exchange>> read_and_handle(Session& s, beast::flat_buffer& buffer,
                                                          std::filesystem::path& temp);
  asio::awaitable<bool> write(Session& s, const Exchange& ex);
  asio::awaitable<void> linger(Session& s, beast::flat_buffer& buffer);

  asio::io_context& io;
  HttpHandler& handler;
  std::filesystem::path temp_dir;
  tcp::acceptor acceptor;
  std::list<Session*> sessions;
  bool stopping = false;
};

HttpServer::HttpServer(asio::io_context& io, HttpHandler& handler, std::filesystem::path temp_dir)
    : impl_(std::make_unique<Impl>(io, handler, std::move(temp_dir))) {}

HttpServer::~HttpServer() = default;

Result<std::uint16_t> HttpServer::listen(const std::string& address, std::uint16_t port) {
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(address, ec);
  if (ec) return fail(errc::kConfigInvalid, "listenAddress \"" + address + "\" is not an IP address");
  tcp::endpoint endpoint(ip, port);
  auto& a = impl_->acceptor;
  const std::string where = address + ":" + std::to_string(port);
  if (a.open(endpoint.protocol(), ec); ec) return fail(errc::kIoError, "open " + where + ": " + ec.message());
  if (a.set_option(asio::socket_base::reuse_address(true), ec); ec)
    return fail(errc::kIoError, "set SO_REUSEADDR: " + ec.message());
  if (a.bind(endpoint, ec); ec) return fail(errc::kIoError, "bind " + where + ": " + ec.message());
  if (a.listen(asio::socket_base::max_listen_connections, ec); ec)
    return fail(errc::kIoError, "listen " + where + ": " + ec.message());
  return a.local_endpoint().port();
}

void HttpServer::start() {
  if (!impl_->acceptor.is_open()) {
    spdlog::error("bug: HttpServer::start() before a successful listen()");
    return;
  }
  asio::co_spawn(impl_->io, impl_->accept_loop(),
                 [](std::exception_ptr e) { log_stray_exception(e, "accept loop"); });
}

void HttpServer::stop() {
  impl_->stopping = true;
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  for (Session* s : impl_->sessions)
    if (s->idle) s->stream.socket().close(ec);
}

asio::awaitable<void> HttpServer::Impl::accept_loop() {
  while (!stopping) {
    auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
    if (stopping || ec == asio::error::operation_aborted) break;
    if (ec) {
      // e.g. EMFILE: pause instead of spinning.
      spdlog::warn("accept: {}", ec.message());
      asio::steady_timer pause(io, 100ms);
      co_await pause.async_wait(use_tuple);
      continue;
    }
    asio::co_spawn(io, run_session(std::move(socket)),
                   [](std::exception_ptr e) { log_stray_exception(e, "HTTP session"); });
  }
}

asio::awaitable<void> HttpServer::Impl::run_session(tcp::socket socket) {
  Session s{beast::tcp_stream(std::move(socket))};
  auto registered = sessions.insert(sessions.end(), &s);
  beast::flat_buffer buffer;
  while (!stopping) {
    std::filesystem::path temp;
    auto exchange = co_await read_and_handle(s, buffer, temp);
    bool written = exchange && co_await write(s, *exchange);
    if (!temp.empty()) {
      std::error_code ec;
      std::filesystem::remove(temp, ec);
    }
    if (written && exchange->body_unread) co_await linger(s, buffer);
    if (!written || !exchange->keep_alive) break;
  }
  sessions.erase(registered);
  boost::system::error_code ec;
  s.stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

// Reads one request and produces its response; nullopt when the connection should just close.
asio::awaitable<std::optional<Exchange>> HttpServer::Impl::read_and_handle(
    Session& s, beast::flat_buffer& buffer, std::filesystem::path& temp) {
  s.idle = true;
  s.stream.expires_after(kIdleTimeout);
  http::request_parser<http::empty_body> header;
  header.header_limit(kHeaderLimit);
  header.body_limit(boost::none);  // the policy's limit is applied below, once the target is known
  auto [hec, hn] = co_await http::async_read_header(s.stream, buffer, header, use_tuple);
  s.idle = false;
  if (hec) co_return std::nullopt;

  HttpRequest req;
  req.method = std::string(header.get().method_string());
  req.target = std::string(header.get().target());
  for (const auto& field : header.get()) req.headers[lowercase(field.name_string())] = field.value();
  if (auto st = parse_target(req); !st) co_return Exchange{error_response(st.error()), false, true};
  const BodyPolicy policy = handler.body_policy(req.method, req.target);
  const auto too_large = [&] {
    return Exchange{error_response(Error{std::string(errc::kPayloadTooLarge),
                                         "request body exceeds " +
                                             std::to_string(policy.max_bytes) + " bytes"}),
                    false, true};
  };
  // Beast checks Content-Length against the limit only while parsing the header: do it here.
  if (header.content_length() && *header.content_length() > policy.max_bytes) co_return too_large();

  if (beast::iequals(header.get()[http::field::expect], "100-continue")) {
    http::response<http::empty_body> cont{http::status::continue_, 11};
    auto [cec, cn] = co_await http::async_write(s.stream, cont, use_tuple);
    if (cec) co_return std::nullopt;
  }
  s.stream.expires_after(kBodyTimeout);
  boost::system::error_code ec;
  bool keep_alive = false;
  if (policy.to_file) {
    http::request_parser<http::file_body> parser(std::move(header));
    parser.body_limit(policy.max_bytes);
    temp = temp_dir / new_id("upload");
    parser.get().body().open(temp.c_str(), beast::file_mode::write_new, ec);
    if (ec) co_return Exchange{error_response(Error{std::string(errc::kIoError), "cannot buffer upload"}), false};
    std::tie(ec, std::ignore) = co_await http::async_read(s.stream, buffer, parser, use_tuple);
    parser.get().body().close();
    keep_alive = parser.get().keep_alive();
    req.body_file = temp;
  } else {
    http::request_parser<http::string_body> parser(std::move(header));
    parser.body_limit(policy.max_bytes);
    std::tie(ec, std::ignore) = co_await http::async_read(s.stream, buffer, parser, use_tuple);
    keep_alive = parser.get().keep_alive();
    req.body = std::move(parser.get().body());
  }
  if (ec == http::error::body_limit) co_return too_large();
  if (ec) co_return std::nullopt;
  s.stream.expires_never();
  const std::string method = req.method, path = req.path;
  HttpResponse res = co_await handler.async_handle(std::move(req));
  spdlog::debug("{} {} -> {}", method, path, res.status);
  co_return Exchange{std::move(res), keep_alive && !stopping};
}

// Closing a socket with unread input makes the kernel send RST, which can destroy the response
// before the client reads it. So: half-close, then discard input for a moment (bounded).
asio::awaitable<void> HttpServer::Impl::linger(Session& s, beast::flat_buffer& buffer) {
  boost::system::error_code ec;
  s.stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  s.stream.expires_after(2s);
  std::size_t drained = 0;
  while (!ec && drained < (64u << 20)) {
    buffer.consume(buffer.size());
    std::size_t n = 0;
    std::tie(ec, n) = co_await s.stream.async_read_some(buffer.prepare(64 * 1024), use_tuple);
    drained += n;
  }
}

asio::awaitable<bool> HttpServer::Impl::write(Session& s, const Exchange& ex) {
  s.stream.expires_after(kWriteTimeout);
  const auto status = static_cast<http::status>(ex.response.status);
  boost::system::error_code ec;
  if (!ex.response.body_file.empty()) {
    http::response<http::file_body> res{status, 11};
    res.body().open(ex.response.body_file.c_str(), beast::file_mode::scan, ec);
    if (!ec) {
      res.set(http::field::content_type, ex.response.content_type);
      res.keep_alive(ex.keep_alive);
      res.prepare_payload();
      std::tie(ec, std::ignore) = co_await http::async_write(s.stream, res, use_tuple);
      co_return !ec;
    }
    spdlog::warn("cannot open {} for a response: {}", ex.response.body_file.string(), ec.message());
    // Named: g++ 12 mishandles non-trivial temporaries inside a co_await expression.
    const Exchange unreadable{
        error_response(Error{std::string(errc::kIoError), "artifact is unreadable"}), false};
    co_return co_await write(s, unreadable);
  }
  http::response<http::string_body> res{status, 11};
  res.set(http::field::content_type, ex.response.content_type);
  res.keep_alive(ex.keep_alive);
  res.body() = ex.response.body;
  res.prepare_payload();
  std::tie(ec, std::ignore) = co_await http::async_write(s.stream, res, use_tuple);
  co_return !ec;
}

}  // namespace takosumi::controlplane
