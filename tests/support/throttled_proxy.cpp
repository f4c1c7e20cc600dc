#include "tests/support/throttled_proxy.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace takosumi::testing {
namespace {

sockaddr_in loopback(unsigned short port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return addr;
}

}  // namespace

ThrottledProxy::ThrottledProxy(unsigned short target, std::uint64_t client_bytes_per_second)
    : target_(target), rate_(std::max<std::uint64_t>(client_bytes_per_second, 1)) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = loopback(0);
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener_, 64) != 0)
    throw std::runtime_error("ThrottledProxy: cannot listen");
  socklen_t len = sizeof addr;
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

ThrottledProxy::~ThrottledProxy() {
  stopping_ = true;
  ::shutdown(listener_, SHUT_RDWR);
  ::close(listener_);
  acceptor_.join();
  {
    std::lock_guard lock(mutex_);
    for (int fd : sockets_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : pumps_) t.join();
  for (int fd : sockets_) ::close(fd);
}

void ThrottledProxy::accept_loop() {
  while (!stopping_) {
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;
    const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto addr = loopback(target_);
    if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(client);
      ::close(upstream);
      continue;
    }
    std::lock_guard lock(mutex_);
    sockets_.insert(sockets_.end(), {client, upstream});
    pumps_.emplace_back([this, client, upstream] { pump(client, upstream, true); });
    pumps_.emplace_back([this, client, upstream] { pump(upstream, client, false); });
  }
}

// Copies until either side closes; throttled, in slices of a tenth of a second's worth.
void ThrottledProxy::pump(int from, int to, bool throttled) {
  const std::size_t slice = throttled ? std::max<std::size_t>(rate_ / 10, 1) : 65536;
  std::vector<char> buffer(slice);
  for (;;) {
    const ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
    if (n <= 0) break;
    for (ssize_t sent = 0; sent < n;) {
      const ssize_t w = ::send(to, buffer.data() + sent, static_cast<std::size_t>(n - sent), MSG_NOSIGNAL);
      if (w <= 0) {
        ::shutdown(from, SHUT_RDWR);
        return;
      }
      sent += w;
    }
    if (throttled) {
      client_bytes_ += static_cast<std::uint64_t>(n);
      // A slow link, not a wait for an event: the pace is the point.
      std::this_thread::sleep_for(std::chrono::milliseconds(100) * n / static_cast<ssize_t>(slice));
    }
  }
  ::shutdown(to, SHUT_WR);
}

}  // namespace takosumi::testing
