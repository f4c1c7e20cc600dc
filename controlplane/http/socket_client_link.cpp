#include "controlplane/http/socket_client_link.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

namespace takosumi::controlplane {
namespace {

// True when the peer has sent FIN or RST. Data waiting to be read means it is still there, unless
// a FIN follows the data: under TLS a closing client sends its close_notify alert first (in TLS
// 1.3 an encrypted record like any other), so the connection's state has to say it.
bool peer_closed(int fd) {
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) {
    tcp_info info{};
    socklen_t len = sizeof info;
    return ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
           info.tcpi_state == TCP_CLOSE_WAIT;
  }
  if (n == 0) return true;
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace

bool SocketClientLink::gone() {
  if (!gone_ && socket_ && socket_->is_open()) gone_ = peer_closed(socket_->native_handle());
  return gone_;
}

void SocketClientLink::on_gone(std::function<void()> fn) {
  on_gone_ = std::move(fn);
  if (on_gone_ && !watching_ && !gone_ && socket_) watch();
}

void SocketClientLink::stop_watching() {
  on_gone_ = nullptr;
  if (watching_ && socket_) {
    boost::system::error_code ignored;
    socket_->cancel(ignored);
  }
}

void SocketClientLink::detach() {
  stop_watching();
  socket_ = nullptr;
}

void SocketClientLink::watch() {
  watching_ = true;
  socket_->async_wait(boost::asio::ip::tcp::socket::wait_read,
                      [self = shared_from_this()](const boost::system::error_code& ec) {
                        self->watched(ec);
                      });
}

void SocketClientLink::watched(const boost::system::error_code& ec) {
  watching_ = false;
  if (ec || !socket_) return;  // cancelled: the handler has returned
  if (!gone()) return;         // readable with data: a pipelined request, not a close
  if (on_gone_) {
    auto fn = on_gone_;  // fn may clear on_gone_
    fn();
  }
}

}  // namespace takosumi::controlplane
