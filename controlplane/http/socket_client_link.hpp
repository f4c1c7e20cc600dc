#pragma once
// ClientLink over a connected TCP socket (under TLS too: it looks below the encryption). gone()
// asks the kernel without blocking (recv with MSG_PEEK | MSG_DONTWAIT: 0 is the peer's FIN,
// ECONNRESET its RST; with data waiting, the TCP state CLOSE_WAIT is a FIN behind it). While a handler has set
// on_gone, an async wait for readability is pending on the socket, so a close is noticed at once;
// pipelined request bytes make the socket readable too, and then watching stops (gone() still
// answers). The server calls stop_watching() when the handler has returned (no callback runs after
// it) and detach() when the exchange is over (the socket is not touched again). Use on the
// io_context's thread only.
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <memory>

#include "controlplane/http/http_types.hpp"

namespace takosumi::controlplane {

class SocketClientLink final : public ClientLink,
                               public std::enable_shared_from_this<SocketClientLink> {
 public:
  // socket must stay open until detach().
  explicit SocketClientLink(boost::asio::ip::tcp::socket& socket) : socket_(&socket) {}

  bool gone() override;
  void on_gone(std::function<void()> fn) override;
  void stop_watching();
  void detach();

 private:
  void watch();
  void watched(const boost::system::error_code& ec);

  boost::asio::ip::tcp::socket* socket_;  // null after detach()
  std::function<void()> on_gone_;
  bool gone_ = false;
  bool watching_ = false;
};

}  // namespace takosumi::controlplane
