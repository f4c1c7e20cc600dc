#pragma once
// Test-only: a TCP proxy on loopback that forwards every connection to 127.0.0.1:<target> and
// passes what the client sends at most `client_bytes_per_second` per connection (what it receives,
// unthrottled): a slow uplink between an agent and its control plane, made of real sockets.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace takosumi::testing {

class ThrottledProxy {
 public:
  ThrottledProxy(unsigned short target, std::uint64_t client_bytes_per_second);
  ~ThrottledProxy();
  ThrottledProxy(const ThrottledProxy&) = delete;
  ThrottledProxy& operator=(const ThrottledProxy&) = delete;

  unsigned short port() const { return port_; }
  std::uint64_t client_bytes() const { return client_bytes_.load(); }

 private:
  void accept_loop();
  void pump(int from, int to, bool throttled);

  unsigned short target_;
  std::uint64_t rate_;
  int listener_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> client_bytes_{0};
  std::mutex mutex_;
  std::vector<int> sockets_;
  std::vector<std::thread> pumps_;
  std::thread acceptor_;
};

}  // namespace takosumi::testing
