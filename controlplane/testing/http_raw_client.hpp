#pragma once
// Test-only: a raw client for the HTTP tests that misbehave on purpose — bodies streamed a chunk
// at a time, heads written by hand, connections dropped or reset mid-exchange — and what it takes
// to check that the server kept nothing on disk.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace takosumi::controlplane::raw {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Regular files under dir, recursively, with their sizes.
inline std::map<std::string, std::uintmax_t> files_under(const std::filesystem::path& dir) {
  std::map<std::string, std::uintmax_t> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) out[it->path().string()] = it->file_size(ec);
  return out;
}

inline std::uintmax_t bytes_under(const std::filesystem::path& dir) {
  std::uintmax_t total = 0;
  for (const auto& [path, size] : files_under(dir)) total += size;
  return total;
}

// Connects to 127.0.0.1:port from source (any address of 127.0.0.0/8 is this host's loopback, so
// a test can play several clients).
inline tcp::socket connect(asio::io_context& io, std::uint16_t port,
                           const char* source = "127.0.0.1") {
  tcp::socket socket(io);
  socket.open(tcp::v4());
  socket.bind({asio::ip::make_address(source), 0});
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  return socket;
}

// True once the server has closed the connection (EOF or reset) with nothing more to read. guard
// only keeps a broken server from hanging the test; it is not a timing expectation.
inline bool closed_by_server(tcp::socket& socket,
                             std::chrono::seconds guard = std::chrono::seconds(60)) {
  pollfd p{socket.native_handle(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(guard.count() * 1000)) <= 0) return false;
  char c = 0;
  return ::recv(socket.native_handle(), &c, 1, 0) <= 0;
}

struct Reply {
  bool answered = false;  // a whole response arrived (the connection may have closed after it)
  unsigned status = 0;
  std::string code;  // error.code of the JSON body, if any
  std::string body;
};

inline Reply read_reply(tcp::socket& socket, beast::flat_buffer& buffer) {
  http::response_parser<http::string_body> parser;
  boost::system::error_code ec;
  http::read(socket, buffer, parser, ec);
  if (ec) return {};
  Reply r{true, parser.get().result_int(), {}, parser.get().body()};
  auto body = boost::json::parse(parser.get().body(), ec);
  if (!ec && body.is_object() && body.as_object().contains("error"))
    r.code = boost::json::value_to<std::string>(body.at("error").at("code"));
  return r;
}

inline Reply read_reply(tcp::socket& socket) {
  beast::flat_buffer buffer;
  return read_reply(socket, buffer);
}

// Writes bytes, ignoring a server that has stopped reading and closed.
inline std::size_t write_some_bytes(tcp::socket& socket, std::string_view bytes) {
  boost::system::error_code ec;
  return asio::write(socket, asio::buffer(bytes.data(), bytes.size()), ec);
}

// Closes with RST instead of FIN (SO_LINGER 0), as a client that crashed or lost its host does.
inline void reset(tcp::socket& socket) {
  boost::system::error_code ec;
  socket.set_option(asio::socket_base::linger(true, 0), ec);
  socket.close(ec);
}

}  // namespace takosumi::controlplane::raw
