#pragma once
// HTTP/1.1 server (Boost.Beast, C++20 coroutines) on one io_context, over TCP or, after set_tls(),
// TLS (OpenSSL; the handshake counts as the start of the first request's header time, and a
// client certificate's identity reaches the handler as HttpRequest::peer_certificate): keep-alive,
// idle and read timeouts, 100-continue. For every request the handler first admits the head (method, target,
// headers): a refusal (e.g. 401) is answered before a single body byte is read, and the connection
// is then closed gently. Otherwise the body is read by the handler's BodyPolicy: in memory, or
// streamed to a temp file (removed after the response) within a budget of temporary bytes shared by
// all requests (503 temp_space_exhausted past it); 413 past the policy's size. Headers past 16 KiB
// are 431 headers_too_large.
// Connections: a request's headers must arrive within header_timeout (from the connection's
// start, or from the first byte of a later request; a keep-alive connection may sit idle up to
// 75 s between requests). A request that was not authenticated (the handler's Admission says so:
// refusals, 404, health checks) closes its connection after the answer. Slots are shared as
// ConnectionSlots says: past max_connections or max_connections_per_client, the oldest connection
// that never authenticated and waits for headers is closed for the new one; with none, the new
// one is closed as soon as accepted. The handler sees the connection as a ClientLink; a response that cannot be written runs its
// on_undelivered. All member functions must be called on the io_context's thread.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "controlplane/http/http_types.hpp"
#include "net/tls_context.hpp"

namespace boost::asio {
class io_context;
}

namespace takosumi::controlplane {

struct ServerLimits {
  std::size_t max_connections = 256;
  std::size_t max_connections_per_client = 64;  // by the peer's IP address
  std::chrono::seconds header_timeout{10};
  std::uint64_t max_temp_bytes = 2048ull << 20;
};

class HttpServer {
 public:
  // temp_dir receives streamed request bodies; handler must outlive the server.
  HttpServer(boost::asio::io_context& io, HttpHandler& handler, std::filesystem::path temp_dir,
             ServerLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the bound port (useful with port 0). config_invalid for an address
  // that is not an IP literal, io_error when binding fails.
  Result<std::uint16_t> listen(const std::string& address, std::uint16_t port);
  void start();
  // HTTPS from now on, with this context (net::make_server_context); a later call replaces it
  // for new connections only (a reload: connections in flight keep theirs). Null: plain HTTP.
  void set_tls(net::TlsContext context);
  // Stops accepting and closes idle connections; requests in flight finish, then their
  // connections close. The io_context runs out of work once they are done.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace takosumi::controlplane
