// The HttpServer's seam with its handler, over real loopback sockets: the handler learns that its
// client has gone while it works, and hears about an answer that could not be delivered.
#include "controlplane/http/http_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "controlplane/testing/http_raw_client.hpp"
#include "crypto/sha256.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

namespace asio = boost::asio;
using raw::tcp;
using namespace std::chrono_literals;

// /big answers 64 MiB; /until-gone answers only once its client has gone. Both count the answers
// that did not get out. /upload takes its body into a file and keeps the digest the server
// computed while receiving it beside the digest of the file's bytes.
class TestHandler final : public HttpHandler {
 public:
  Admission admit(const HttpRequest& req) override {
    if (req.path == "/upload") return Admission{std::nullopt, BodyPolicy{8 << 20, true}};
    return Admission{std::nullopt, BodyPolicy{}};
  }

  asio::awaitable<HttpResponse> async_handle(HttpRequest req) override {
    if (req.path == "/upload") {
      auto on_disk = crypto::sha256_file_hex(req.body_file);
      const std::lock_guard lock(mutex_);
      received_sha256_ = req.body_sha256;
      file_sha256_ = on_disk ? *on_disk : on_disk.error().to_string();
    }
    if (req.path == "/until-gone") co_await async_wait_gone(*req.client);
    HttpResponse res = json_response(200, boost::json::object{{"ok", true}});
    if (req.path == "/big") res.body = std::string(64 << 20, 'x');
    res.on_undelivered = [this] { ++undelivered; };
    co_return res;
  }

  std::atomic<int> undelivered{0};
  std::atomic<bool> saw_gone{false};
  std::pair<std::string, std::string> upload_digests() {
    const std::lock_guard lock(mutex_);
    return {received_sha256_, file_sha256_};
  }

 private:
  std::mutex mutex_;
  std::string received_sha256_;
  std::string file_sha256_;

  asio::awaitable<void> async_wait_gone(ClientLink& client) {
    asio::steady_timer timer(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
    client.on_gone([&timer] { timer.cancel(); });
    if (!client.gone()) co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    client.on_gone(nullptr);
    saw_gone = client.gone();
  }
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto port = server_.listen("127.0.0.1", 0);
    ASSERT_TRUE(port) << port.error().to_string();
    port_ = *port;
    server_.start();
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    asio::post(io_, [this] { server_.stop(); });
    io_.stop();  // a handler may still wait for a client that never left
    thread_.join();
  }
  // Polls (bounded) until the server thread has counted `n` undelivered answers.
  bool undelivered_reaches(int n) {
    for (int i = 0; i < 1000 && handler_.undelivered < n; ++i) std::this_thread::sleep_for(10ms);
    return handler_.undelivered == n;
  }

  takosumi::testing::TempDir dir_;
  asio::io_context io_{1};
  TestHandler handler_;
  HttpServer server_{io_, handler_, dir_.path()};
  std::thread thread_;
  std::uint16_t port_ = 0;
};

TEST_F(HttpServerTest, AnAnswerCutOffByAResetIsReportedUndelivered) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.open(tcp::v4());
  socket.set_option(asio::socket_base::receive_buffer_size(4096));
  socket.connect({asio::ip::make_address("127.0.0.1"), port_});
  raw::write_some_bytes(socket, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  char first[1024];
  asio::read(socket, asio::buffer(first));  // the answer has started
  raw::reset(socket);
  EXPECT_TRUE(undelivered_reaches(1));
}

// The digest of a body streamed to a file is computed while it arrives (no handler reads an
// upload again to hash it): it must be the digest of exactly the bytes in the file, whatever
// pieces the body came in.
TEST_F(HttpServerTest, AStreamedBodysDigestIsThatOfTheBytesInItsFile) {
  std::string body;
  for (std::uint64_t i = 0; body.size() < (3u << 20) + 17; ++i) body += std::to_string(i * 7919) + ",";
  const std::string expected = crypto::sha256_hex(body);
  asio::io_context io;
  {
    tcp::socket socket = raw::connect(io, port_);
    raw::write_some_bytes(socket, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                      std::to_string(body.size()) + "\r\n\r\n" + body);
    EXPECT_EQ(raw::read_reply(socket).status, 200u);
    EXPECT_EQ(handler_.upload_digests(), std::make_pair(expected, expected));
  }
  {
    tcp::socket socket = raw::connect(io, port_);
    raw::write_some_bytes(socket, "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    // Chunks of odd sizes, each written on its own.
    for (std::size_t at = 0, size = 1; at < body.size(); at += size, size = size * 3 + 5) {
      const auto chunk = std::string_view(body).substr(at, size);
      std::ostringstream head;
      head << std::hex << chunk.size() << "\r\n";
      raw::write_some_bytes(socket, head.str() + std::string(chunk) + "\r\n");
    }
    raw::write_some_bytes(socket, "0\r\n\r\n");
    EXPECT_EQ(raw::read_reply(socket).status, 200u);
    EXPECT_EQ(handler_.upload_digests(), std::make_pair(expected, expected));
  }
}

TEST_F(HttpServerTest, AnAnswerThatGetsOutIsNotReportedUndelivered) {
  asio::io_context io;
  tcp::socket socket = raw::connect(io, port_);
  raw::write_some_bytes(socket, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(raw::read_reply(socket).status, 200u);
  EXPECT_EQ(handler_.undelivered, 0);
}

// The handler hears of the close while it waits, and its answer is not written to a client that
// has gone; both for a FIN and for a RST.
TEST_F(HttpServerTest, AHandlerLearnsThatItsClientHasGone) {
  asio::io_context io;
  tcp::socket finished = raw::connect(io, port_);
  raw::write_some_bytes(finished, "GET /until-gone HTTP/1.1\r\nHost: x\r\n\r\n");
  finished.close();
  EXPECT_TRUE(undelivered_reaches(1));
  EXPECT_TRUE(handler_.saw_gone);
  tcp::socket reset = raw::connect(io, port_);
  raw::write_some_bytes(reset, "GET /until-gone HTTP/1.1\r\nHost: x\r\n\r\n");
  raw::reset(reset);
  EXPECT_TRUE(undelivered_reaches(2));
}

}  // namespace
}  // namespace takosumi::controlplane
