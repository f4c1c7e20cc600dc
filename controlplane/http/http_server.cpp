#include "controlplane/http/http_server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <list>
#include <optional>
#include <type_traits>
#include <utility>

#include "common/ascii.hpp"
#include "common/error_codes.hpp"
#include "controlplane/http/connection_slots.hpp"
#include "crypto/random_ids.hpp"
#include "crypto/sha256.hpp"
#include "controlplane/http/socket_client_link.hpp"
#include "controlplane/http/temp_budget.hpp"
#include "net/tls_context.hpp"

namespace takosumi::controlplane {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using namespace std::chrono_literals;

// How long a keep-alive connection may wait for its next request to begin; the headers then have
// ServerLimits::header_timeout.
constexpr auto kIdleTimeout = 75s;
constexpr auto kBodyTimeout = 300s;
constexpr auto kWriteTimeout = 300s;
constexpr std::uint32_t kHeaderLimit = 16 * 1024;
// After an answer given without reading the body: how long and how much to discard so that the
// answer reaches the client before the close turns into a reset.
constexpr auto kLingerTime = 2s;
constexpr std::size_t kLingerBytes = 1 << 20;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

using HeadParser = http::request_parser<http::empty_body>;


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

// http::file_body whose bytes are reserved in the temp budget before they are written: a body
// past the budget fails the read (TempUpload::refused) instead of filling the disk.
struct BudgetedFileBody {
  struct value_type {
    http::file_body::value_type file;
    TempUpload* upload = nullptr;
    std::uint64_t written = 0;
    // Hashed as it is written, so no handler reads an upload of up to 256 MiB again for it.
    crypto::Sha256 digest;
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(http::header<isRequest, Fields>& h, value_type& body) : body_(body), file_(h, body.file) {}
    void init(const boost::optional<std::uint64_t>& length, beast::error_code& ec) {
      file_.init(length, ec);
    }
    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, beast::error_code& ec) {
      const std::uint64_t n = beast::buffer_bytes(buffers);
      if (!body_.upload->reserve_total(body_.written + n)) {
        ec = boost::system::errc::make_error_code(boost::system::errc::no_space_on_device);
        return 0;
      }
      body_.written += n;
      const std::size_t put = file_.put(buffers, ec);
      std::size_t hashed = 0;
      for (const auto buffer : beast::buffers_range_ref(buffers)) {
        if (hashed == put) break;
        const std::size_t take = std::min(buffer.size(), put - hashed);
        body_.digest.update(std::string_view(static_cast<const char*>(buffer.data()), take));
        hashed += take;
      }
      return put;
    }
    void finish(beast::error_code& ec) { file_.finish(ec); }

   private:
    value_type& body_;
    http::file_body::reader file_;
  };
};

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection, over TCP (beast::tcp_stream) or TLS (TlsStream); timeouts, eviction and the
// gone-client watch always act on the TCP layer underneath.
template <class Stream>
struct Session {
  ConnectionSlots::Id id;
  Stream stream;
  std::string client;            // the peer's IP address
  bool answered_before = false;  // a request was answered on this connection
  std::string peer_certificate;  // the verified client certificate's identity (mutual TLS)
  // The handshake's deadline also covers the first request's headers: one header timeout from
  // the accept, under TLS as without.
  bool header_deadline_running = false;
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream); }
};

// A session as stop() and eviction see it: its id and the socket to close.
struct LiveSession {
  ConnectionSlots::Id id;
  tcp::socket* socket;
};

struct Exchange {
  HttpResponse response;
  bool keep_alive = false;
  bool body_unread = false;  // answered before reading the body: close gently (see linger)
  std::shared_ptr<SocketClientLink> client;
};

// An answer given instead of reading (the rest of) the request; the connection closes after it.
Exchange refusal(HttpResponse response, bool body_unread = true) {
  return Exchange{std::move(response), false, body_unread, nullptr};
}

Exchange refusal(std::string_view code, std::string message) {
  return refusal(error_response(Error{std::string(code), std::move(message)}));
}

// How reading a body ended; all but complete and broken are answered instead of the handler.
struct BodyRead {
  enum Outcome { complete, broken, too_large, over_budget, unbufferable } outcome = complete;
  bool keep_alive = false;
};

// The answer for a body that was not read to the end, or nullopt to just close.
std::optional<Exchange> answer_for(BodyRead::Outcome outcome, const BodyPolicy& policy) {
  switch (outcome) {
    case BodyRead::too_large:
      return refusal(errc::kPayloadTooLarge,
                     "request body exceeds " + std::to_string(policy.max_bytes) + " bytes");
    case BodyRead::over_budget:
      return refusal(errc::kTempSpaceExhausted,
                     "the server's space for uploads in progress is in use; retry later");
    case BodyRead::unbufferable: return refusal(errc::kIoError, "cannot buffer upload");
    case BodyRead::complete:
    case BodyRead::broken: break;
  }
  return std::nullopt;
}

// Headers a request may carry once: two Authorization headers would let whoever reads the first
// and whoever reads the last see different callers (a proxy in front, this server).
constexpr std::array<std::string_view, 5> kSingleHeaders{"authorization", "proxy-authorization",
                                                         "host", "content-type", "content-length"};

Result<HttpRequest> head_of(const HeadParser& parser) {
  HttpRequest req;
  req.method = std::string(parser.get().method_string());
  req.target = std::string(parser.get().target());
  for (const auto& field : parser.get()) {
    std::string name = ascii_lower(field.name_string());
    const bool single = std::find(kSingleHeaders.begin(), kSingleHeaders.end(), name) != kSingleHeaders.end();
    if (single && req.headers.contains(name))
      return fail(errc::kInvalidArgument, "the request carries the " + std::string(field.name_string()) +
                                              " header more than once; send it once");
    req.headers[std::move(name)] = field.value();
  }
  return req;
}

}  // namespace

struct HttpServer::Impl {
  Impl(asio::io_context& io_, HttpHandler& handler_, std::filesystem::path temp, ServerLimits lim)
      : io(io_), handler(handler_), temp_dir(std::move(temp)), limits(lim),
        budget(std::make_shared<TempBudget>(lim.max_temp_bytes)), acceptor(io_),
        slots({lim.max_connections, lim.max_connections_per_client}) {}

  asio::awaitable<void> accept_loop();
  void admit_connection(tcp::socket socket);
  void evict(ConnectionSlots::Id id);
  void warn_pressed(const ConnectionSlots::Grant& grant, const std::string& client);
  asio::awaitable<void> run_session(ConnectionSlots::Id id, tcp::socket socket, std::string client);
  template <class Stream>
  asio::awaitable<void> serve(Session<Stream>& s);
  asio::awaitable<bool> handshake(Session<TlsStream>& s);
  template <class Stream>
  asio::awaitable<bool> await_request_start(Session<Stream>& s, beast::flat_buffer& buffer);
  template <class Stream>
  asio::awaitable<std::optional<Exchange>> read_and_handle(Session<Stream>& s,
                                                          beast::flat_buffer& buffer,
                                                          std::optional<TempUpload>& upload);
  template <class Stream>
  asio::awaitable<BodyRead> read_body(Session<Stream>& s, beast::flat_buffer& buffer,
                                      HeadParser& head, const BodyPolicy& policy, HttpRequest& req,
                                      std::optional<TempUpload>& upload);
  template <class Stream>
  asio::awaitable<BodyRead> read_to_file(Session<Stream>& s, beast::flat_buffer& buffer,
                                         HeadParser& head, const BodyPolicy& policy,
                                         HttpRequest& req, TempUpload& upload);
  template <class Stream>
  asio::awaitable<BodyRead> read_to_memory(Session<Stream>& s, beast::flat_buffer& buffer,
                                           HeadParser& head, const BodyPolicy& policy,
                                           HttpRequest& req);
  template <class Stream>
  asio::awaitable<Exchange> handle(Session<Stream>& s, HttpRequest req, bool keep_alive);
  template <class Stream>
  asio::awaitable<bool> deliver(Session<Stream>& s, Exchange& ex);
  template <class Stream>
  asio::awaitable<bool> write(Session<Stream>& s, const Exchange& ex);
  asio::awaitable<void> linger(beast::tcp_stream& tcp, beast::flat_buffer& buffer);

  asio::io_context& io;
  HttpHandler& handler;
  std::filesystem::path temp_dir;
  ServerLimits limits;
  std::shared_ptr<TempBudget> budget;  // shared with every TempUpload (see there)
  tcp::acceptor acceptor;
  ConnectionSlots slots;  // taken at accept, before the session starts
  std::list<LiveSession> sessions;
  net::TlsContext tls;  // null: plain HTTP; replaced by set_tls() (a reload)
  bool pressed = false;  // a limit evicted or refused; logged once until a connection gets in freely
  bool stopping = false;
};

HttpServer::HttpServer(asio::io_context& io, HttpHandler& handler, std::filesystem::path temp_dir,
                       ServerLimits limits)
    : impl_(std::make_unique<Impl>(io, handler, std::move(temp_dir), limits)) {}

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

void HttpServer::set_tls(net::TlsContext context) { impl_->tls = std::move(context); }

void HttpServer::stop() {
  impl_->stopping = true;
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  for (const LiveSession& s : impl_->sessions)
    if (impl_->slots.waiting(s.id)) s.socket->close(ec);
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
    admit_connection(std::move(socket));
  }
}

// A refused connection costs one accept and one close: nothing is read from it.
void HttpServer::Impl::admit_connection(tcp::socket socket) {
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  // A peer that reset before the accept has no address any more, but its request may still be
  // read (and its handler learn that it has gone): it goes on under the empty address.
  const std::string client = ec ? std::string() : peer.address().to_string();
  const ConnectionSlots::Grant grant = slots.admit(client);
  if (grant.evicted) evict(*grant.evicted);
  warn_pressed(grant, client);
  if (!grant.id) {
    socket.close(ec);
    return;
  }
  const ConnectionSlots::Id id = *grant.id;
  // A response goes out in more than one write (head, body chunks, TLS records): with Nagle's
  // algorithm the last short segment waits for the client's delayed ACK, 40 ms on Linux.
  socket.set_option(tcp::no_delay(true), ec);
  asio::co_spawn(io, run_session(id, std::move(socket), client), [this, id](std::exception_ptr e) {
    slots.release(id);
    log_stray_exception(e, "HTTP session");
  });
}

// The evicted session is waiting for headers: closing its socket ends its read, then the session.
void HttpServer::Impl::evict(ConnectionSlots::Id id) {
  auto s = std::ranges::find(sessions, id, &LiveSession::id);
  boost::system::error_code ignored;
  if (s != sessions.end()) s->socket->close(ignored);
}

void HttpServer::Impl::warn_pressed(const ConnectionSlots::Grant& grant, const std::string& client) {
  const bool freely = grant.id && !grant.evicted;
  if (freely || pressed) {
    pressed = !freely;
    return;
  }
  pressed = true;
  if (grant.refused == ConnectionSlots::Refusal::per_client)
    spdlog::warn("{} holds {} connections (maxConnectionsPerClient), all authenticated or busy: "
                 "closing its new ones until one ends", client, slots.open_from(client));
  else if (grant.refused == ConnectionSlots::Refusal::total)
    spdlog::warn("{} connections open (maxConnections), all authenticated or busy: closing new "
                 "ones until one ends", slots.open());
  else
    spdlog::warn("connection limit reached (maxConnections or maxConnectionsPerClient for {}): "
                 "closing the oldest unauthenticated idle connections for new ones", client);
}

asio::awaitable<void> HttpServer::Impl::run_session(ConnectionSlots::Id id, tcp::socket socket,
                                                    std::string client) {
  if (!slots.waiting(id)) co_return;  // evicted before it started: the socket closes here
  if (!tls) {
    Session<beast::tcp_stream> s{id, beast::tcp_stream(std::move(socket)), std::move(client)};
    co_await serve(s);
    co_return;
  }
  // The connection keeps the context it began with: a reload affects new connections only.
  const net::TlsContext context = tls;
  Session<TlsStream> s{id, TlsStream(beast::tcp_stream(std::move(socket)), *context),
                       std::move(client)};
  co_await serve(s);
}

template <class Stream>
asio::awaitable<void> HttpServer::Impl::serve(Session<Stream>& s) {
  auto registered = sessions.insert(sessions.end(), LiveSession{s.id, &s.tcp().socket()});
  bool ready = true;
  if constexpr (std::is_same_v<Stream, TlsStream>) ready = co_await handshake(s);
  beast::flat_buffer buffer;
  while (ready && !stopping) {
    std::optional<TempUpload> upload;  // removed, and its budget returned, after the response
    auto exchange = co_await read_and_handle(s, buffer, upload);
    if (!exchange) break;
    s.answered_before = true;
    const bool written = co_await deliver(s, *exchange);
    upload.reset();
    if (written && exchange->body_unread) co_await linger(s.tcp(), buffer);
    if (!written || !exchange->keep_alive) break;
  }
  sessions.erase(registered);
  // No close_notify exchange under TLS: every response carries its length, so a client cannot
  // mistake the close for a truncation, and waiting for the peer's alert would hold the slot.
  boost::system::error_code ec;
  s.tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
}

// Within the header timeout, like the request head that follows. A client that does not trust
// this server, or (mutual TLS) has no certificate the clientCaFile's CA issued, ends here.
asio::awaitable<bool> HttpServer::Impl::handshake(Session<TlsStream>& s) {
  s.tcp().expires_after(limits.header_timeout);
  auto [ec] = co_await s.stream.async_handshake(asio::ssl::stream_base::server, use_tuple);
  if (ec) {
    if (s.tcp().socket().is_open())
      spdlog::info("TLS handshake with {} failed: {}", s.client, ec.message());
    co_return false;
  }
  s.peer_certificate = net::peer_certificate_identity(s.stream.native_handle());
  s.header_deadline_running = true;
  co_return true;
}

// Between requests on a keep-alive connection: waits up to kIdleTimeout for the next request's
// first byte. A new connection has no such grace: its header timeout runs from the start.
template <class Stream>
asio::awaitable<bool> HttpServer::Impl::await_request_start(Session<Stream>& s, beast::flat_buffer& buffer) {
  if (!s.answered_before || buffer.size() > 0) co_return true;
  s.tcp().expires_after(kIdleTimeout);
  auto [ec, n] = co_await s.stream.async_read_some(buffer.prepare(4096), use_tuple);
  buffer.commit(n);
  co_return !ec;
}

// Reads one request and produces its response; nullopt when the connection should just close.
// The handler admits the head before a single body byte is read.
template <class Stream>
asio::awaitable<std::optional<Exchange>> HttpServer::Impl::read_and_handle(
    Session<Stream>& s, beast::flat_buffer& buffer, std::optional<TempUpload>& upload) {
  slots.set_waiting(s.id, true);
  if (!co_await await_request_start(s, buffer)) co_return std::nullopt;
  if (!std::exchange(s.header_deadline_running, false)) s.tcp().expires_after(limits.header_timeout);
  HeadParser head;
  head.header_limit(kHeaderLimit);
  head.body_limit(boost::none);  // the policy's limit is applied once the handler has chosen it
  auto [hec, hn] = co_await http::async_read_header(s.stream, buffer, head, use_tuple);
  slots.set_waiting(s.id, false);
  if (!s.tcp().socket().is_open()) co_return std::nullopt;  // evicted while its read completed
  if (hec == http::error::header_limit)
    co_return refusal(errc::kHeadersTooLarge,
                      "request headers exceed " + std::to_string(kHeaderLimit) + " bytes");
  if (hec) co_return std::nullopt;
  auto parsed = head_of(head);
  if (!parsed) co_return refusal(error_response(parsed.error()), !head.is_done());
  HttpRequest req = std::move(*parsed);
  req.peer_certificate = s.peer_certificate;
  if (auto st = parse_target(req); !st) co_return refusal(error_response(st.error()), !head.is_done());
  Admission admission = handler.admit(req);
  if (admission.refusal) co_return refusal(std::move(*admission.refusal), !head.is_done());
  if (admission.authenticated) slots.set_authenticated(s.id);
  req.caller = std::move(admission.caller);
  const BodyRead body = co_await read_body(s, buffer, head, admission.body, req, upload);
  if (body.outcome != BodyRead::complete) co_return answer_for(body.outcome, admission.body);
  // Only a credential keeps a connection open (a health check does not).
  const bool keep_alive = body.keep_alive && admission.authenticated && !stopping;
  co_return co_await handle(s, std::move(req), keep_alive);
}

template <class Stream>
asio::awaitable<BodyRead> HttpServer::Impl::read_body(Session<Stream>& s, beast::flat_buffer& buffer,
                                                      HeadParser& head, const BodyPolicy& policy,
                                                      HttpRequest& req,
                                                      std::optional<TempUpload>& upload) {
  // Beast checks Content-Length against the limit only while parsing the header: do it here.
  const auto length = head.content_length();
  if (length && *length > policy.max_bytes) co_return BodyRead{BodyRead::too_large};
  if (policy.to_file) {
    upload.emplace(budget, temp_dir / crypto::new_id("upload"));
    if (length && !upload->reserve_total(*length)) co_return BodyRead{BodyRead::over_budget};
  }
  if (beast::iequals(head.get()[http::field::expect], "100-continue")) {
    http::response<http::empty_body> cont{http::status::continue_, 11};
    auto [cec, cn] = co_await http::async_write(s.stream, cont, use_tuple);
    if (cec) co_return BodyRead{BodyRead::broken};
  }
  s.tcp().expires_after(kBodyTimeout);
  if (!policy.to_file) co_return co_await read_to_memory(s, buffer, head, policy, req);
  const BodyRead read = co_await read_to_file(s, buffer, head, policy, req, *upload);
  if (!upload->refused()) co_return read;
  upload.reset();  // the partial file is removed before the answer goes out
  co_return BodyRead{BodyRead::over_budget};
}

template <class Stream>
asio::awaitable<BodyRead> HttpServer::Impl::read_to_file(Session<Stream>& s, beast::flat_buffer& buffer,
                                                         HeadParser& head, const BodyPolicy& policy,
                                                         HttpRequest& req, TempUpload& upload) {
  http::request_parser<BudgetedFileBody> parser(std::move(head));
  parser.body_limit(policy.max_bytes);
  boost::system::error_code ec;
  parser.get().body().file.open(upload.path().c_str(), beast::file_mode::write_new, ec);
  if (ec) co_return BodyRead{BodyRead::unbufferable};
  parser.get().body().upload = &upload;
  std::tie(ec, std::ignore) = co_await http::async_read(s.stream, buffer, parser, use_tuple);
  parser.get().body().file.close();
  if (ec == http::error::body_limit) co_return BodyRead{BodyRead::too_large};
  if (ec) co_return BodyRead{BodyRead::broken};
  req.body_file = upload.path();
  req.body_sha256 = parser.get().body().digest.final_hex();
  co_return BodyRead{BodyRead::complete, parser.get().keep_alive()};
}

template <class Stream>
asio::awaitable<BodyRead> HttpServer::Impl::read_to_memory(Session<Stream>& s, beast::flat_buffer& buffer,
                                                           HeadParser& head, const BodyPolicy& policy,
                                                           HttpRequest& req) {
  http::request_parser<http::string_body> parser(std::move(head));
  parser.body_limit(policy.max_bytes);
  auto [ec, n] = co_await http::async_read(s.stream, buffer, parser, use_tuple);
  if (ec == http::error::body_limit) co_return BodyRead{BodyRead::too_large};
  if (ec) co_return BodyRead{BodyRead::broken};
  req.body = std::move(parser.get().body());
  co_return BodyRead{BodyRead::complete, parser.get().keep_alive()};
}

template <class Stream>
asio::awaitable<Exchange> HttpServer::Impl::handle(Session<Stream>& s, HttpRequest req, bool keep_alive) {
  s.tcp().expires_never();
  auto client = std::make_shared<SocketClientLink>(s.tcp().socket());
  req.client = client;
  const std::string method = req.method, path = req.path;
  HttpResponse res = co_await handler.async_handle(std::move(req));
  client->stop_watching();
  spdlog::debug("{} {} -> {}", method, path, res.status);
  co_return Exchange{std::move(res), keep_alive, false, std::move(client)};
}

// Writes the answer unless its client is known to have gone; an answer that does not get out runs
// its on_undelivered.
template <class Stream>
asio::awaitable<bool> HttpServer::Impl::deliver(Session<Stream>& s, Exchange& ex) {
  bool written = false;
  if (!ex.response.on_undelivered || !ex.client || !ex.client->gone()) written = co_await write(s, ex);
  if (!written && ex.response.on_undelivered) ex.response.on_undelivered();
  if (ex.client) ex.client->detach();
  co_return written;
}

// Closing a socket with unread input makes the kernel send RST, which can destroy the response
// before the client reads it. So: half-close, then discard input for a moment (bounded).
asio::awaitable<void> HttpServer::Impl::linger(beast::tcp_stream& tcp, beast::flat_buffer& buffer) {
  // Under TLS too the bytes are only discarded, so the TCP layer reads them undecrypted.
  boost::system::error_code ec;
  tcp.socket().shutdown(tcp::socket::shutdown_send, ec);
  tcp.expires_after(kLingerTime);
  std::size_t drained = 0;
  while (!ec && drained < kLingerBytes) {
    buffer.consume(buffer.size());
    std::size_t n = 0;
    std::tie(ec, n) = co_await tcp.async_read_some(buffer.prepare(64 * 1024), use_tuple);
    drained += n;
  }
}

template <class Stream>
asio::awaitable<bool> HttpServer::Impl::write(Session<Stream>& s, const Exchange& ex) {
  s.tcp().expires_after(kWriteTimeout);
  const auto status = static_cast<http::status>(ex.response.status);
  boost::system::error_code ec;
  if (!ex.response.body_file.empty()) {
    http::response<http::file_body> res{status, 11};
    res.body().open(ex.response.body_file.c_str(), beast::file_mode::scan, ec);
    if (!ec) {
      res.set(http::field::content_type, ex.response.content_type);
      for (const auto& [name, value] : ex.response.headers) res.set(name, value);
      res.keep_alive(ex.keep_alive);
      res.prepare_payload();
      std::tie(ec, std::ignore) = co_await http::async_write(s.stream, res, use_tuple);
      co_return !ec;
    }
    spdlog::warn("cannot open {} for a response: {}", ex.response.body_file.string(), ec.message());
    // Named: g++ 12 mishandles non-trivial temporaries inside a co_await expression.
    const Exchange unreadable = refusal(errc::kIoError, "artifact is unreadable");
    co_return co_await write(s, unreadable);
  }
  http::response<http::string_body> res{status, 11};
  res.set(http::field::content_type, ex.response.content_type);
  for (const auto& [name, value] : ex.response.headers) res.set(name, value);
  res.keep_alive(ex.keep_alive);
  res.body() = ex.response.body;
  res.prepare_payload();
  std::tie(ec, std::ignore) = co_await http::async_write(s.stream, res, use_tuple);
  co_return !ec;
}

}  // namespace takosumi::controlplane
