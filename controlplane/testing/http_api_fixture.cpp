#include "controlplane/testing/http_api_fixture.hpp"

#include "controlplane/testing/http_wire.hpp"

namespace takosumi::controlplane {

Reply HttpApiTest::send(http::verb verb, const std::string& target, std::string body, Headers headers) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port_});
  http::write(socket, make_request(verb, target, std::move(body), headers));
  beast::flat_buffer buffer;
  return read_reply(socket, buffer);
}

}  // namespace takosumi::controlplane
