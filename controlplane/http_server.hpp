#pragma once
// HTTP/1.1 server (Boost.Beast, C++20 coroutines) on one io_context: keep-alive, per-request body
// limits chosen by the handler's BodyPolicy (413 past them), bodies streamed to a temp file when
// the policy says so (removed after the response), 100-continue, idle and read timeouts.
// All member functions must be called on the io_context's thread.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "controlplane/http_types.hpp"

namespace boost::asio {
class io_context;
}

namespace takosumi::controlplane {

class HttpServer {
 public:
  // temp_dir receives streamed request bodies; handler must outlive the server.
  HttpServer(boost::asio::io_context& io, HttpHandler& handler, std::filesystem::path temp_dir);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the bound port (useful with port 0). config_invalid for an address
  // that is not an IP literal, io_error when binding fails.
  Result<std::uint16_t> listen(const std::string& address, std::uint16_t port);
  void start();
  // Stops accepting and closes idle connections; requests in flight finish, then their
  // connections close. The io_context runs out of work once they are done.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace takosumi::controlplane
