// What a client can cost the control plane before and after it authenticates, over real loopback
// sockets: no unauthenticated body byte is stored, oversized headers get 431 with the error JSON,
// connections without a credential give up their slots to those with one (maxConnections,
// maxConnectionsPerClient, headerTimeoutSeconds, one answer per unauthenticated connection), and
// bodies streamed to disk share maxTempMiB.
#include <chrono>
#include <thread>

#include "controlplane/testing/http_api_fixture.hpp"
#include "controlplane/testing/http_wire.hpp"
#include "controlplane/testing/http_raw_client.hpp"

namespace takosumi::controlplane {
namespace {

namespace fs = std::filesystem;
using raw::tcp;
using namespace std::chrono_literals;

struct Streamed {
  std::uint64_t sent = 0;     // bytes the kernel took from us before the server closed
  bool tmp_used = false;      // the temp directory held a file at some point
  raw::Reply reply;
};

// Writes head, then a body of total bytes a MiB at a time until the server stops taking it, and
// reads the answer. Watches tmp while it writes.
Streamed stream_upload(std::uint16_t port, const std::string& head, std::uint64_t total,
                       const fs::path& tmp) {
  asio::io_context io;
  tcp::socket socket = raw::connect(io, port);
  Streamed out;
  raw::write_some_bytes(socket, head);
  const std::string chunk(1 << 20, 'x');
  boost::system::error_code ec;
  while (out.sent < total && !ec) {
    const auto n = std::min<std::uint64_t>(chunk.size(), total - out.sent);
    out.sent += asio::write(socket, asio::buffer(chunk.data(), n), ec);
    out.tmp_used = out.tmp_used || !raw::files_under(tmp).empty();
  }
  out.reply = raw::read_reply(socket);
  return out;
}

std::string head(const std::string& request_line, const std::string& fields) {
  return request_line + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + "\r\n";
}

TEST_F(HttpApiTest, UnauthenticatedUploadIsRefusedBeforeAnyByteIsStored) {
  register_agent();
  const fs::path data = dir_.path() / "data";
  const auto before = raw::files_under(data);
  constexpr std::uint64_t kTotal = 200'000'000;
  const std::string length = "Content-Length: " + std::to_string(kTotal) + "\r\n";
  const std::vector<std::string> heads{
      head("PUT /agent/v1/runs/run_x/artifacts/plan", length),
      head("PUT /agent/v1/runs/run_x/artifacts/plan",
           "Authorization: Bearer not-an-agent-token\r\nX-Takosumi-Lease: l\r\n" + length),
      head("PUT /agent/v1/runs/run_x/artifacts/state", "Transfer-Encoding: chunked\r\n"),
      head("POST /api/v1/workspaces", "Content-Type: application/json\r\n" + length),
      head("POST /agent/v1/register", "Authorization: Bearer guess\r\n" + length)};
  for (const auto& h : heads) {
    const Streamed r = stream_upload(port_, h, kTotal, data / "tmp");
    EXPECT_TRUE(r.reply.answered) << h;
    EXPECT_EQ(r.reply.status, 401u) << h;
    EXPECT_EQ(r.reply.code, "unauthorized") << h;
    EXPECT_LT(r.sent, kTotal / 4) << h;  // the server stopped reading long before the end
    EXPECT_FALSE(r.tmp_used) << h;
  }
  EXPECT_EQ(raw::files_under(data), before);
  // The server is still there for those who hold a token.
  EXPECT_EQ(api(http::verb::get, "/api/v1/workspaces").status, 200u);
}

TEST_F(HttpApiTest, UnknownRoutesAreRefusedBeforeTheBody) {
  const Streamed r = stream_upload(port_, head("PUT /agent/v1/nothing", "Content-Length: 50000000\r\n"),
                                   50'000'000, dir_.path() / "data/tmp");
  EXPECT_EQ(r.reply.status, 404u);
  EXPECT_EQ(r.reply.code, "not_found");
  EXPECT_LT(r.sent, 50'000'000u);
}

TEST_F(HttpApiTest, OversizedHeadersAre431WithTheErrorJson) {
  asio::io_context io;
  tcp::socket socket = raw::connect(io, port_);
  raw::write_some_bytes(socket, head("GET /api/v1/workspaces",
                                     std::string("Authorization: Bearer ") + kApiToken +
                                         "\r\nX-Padding: " + std::string(64 * 1024, 'a') + "\r\n"));
  const raw::Reply r = raw::read_reply(socket);
  ASSERT_TRUE(r.answered);
  EXPECT_EQ(r.status, 431u);
  EXPECT_EQ(r.code, "headers_too_large");
}

// Two Authorization headers (one a viewer's, one the admin's, say) are refused whichever comes
// first: a proxy in front that reads one and this server that read the other would disagree on
// who is calling.
TEST_F(HttpApiTest, ARequestWithTwoAuthorizationHeadersIsRefused) {
  for (const std::string& second : {std::string("Bearer tkn_") + std::string(64, '0'), std::string("Bearer ") + kApiToken}) {
    asio::io_context io;
    tcp::socket socket = raw::connect(io, port_);
    raw::write_some_bytes(socket, head("GET /api/v1/workspaces",
                                       std::string("Authorization: Bearer ") + kApiToken +
                                           "\r\nAuthorization: " + second + "\r\n"));
    const raw::Reply r = raw::read_reply(socket);
    ASSERT_TRUE(r.answered);
    EXPECT_EQ(r.status, 400u);
    EXPECT_EQ(r.code, "invalid_argument");
    EXPECT_NE(r.body.find("Authorization header more than once"), std::string::npos) << r.body;
  }
}

// An authenticated request (the API token); keep-alive, so the connection stays open after it.
http::request<http::string_body> operator_request() {
  return make_request(http::verb::get, "/api/v1/workspaces", {},
                      {{"authorization", std::string("Bearer ") + kApiToken}});
}

// Sends req on socket; true when it is answered 200.
bool served(tcp::socket& socket, const http::request<http::string_body>& req = operator_request()) {
  boost::system::error_code ec;
  http::write(socket, req, ec);
  return !ec && raw::read_reply(socket).status == 200u;
}

// The first bytes of a request whose headers never end, as a client dripping them would send.
constexpr std::string_view kUnfinishedHead = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";

// Header timeouts long enough that only the connection limits close a connection in these tests.
class ConnectionLimitTest : public HttpApiTest {
 protected:
  void configure(ControlConfig& cfg) override {
    cfg.max_connections = 4;
    cfg.header_timeout_seconds = 300;
  }
  http::request<http::string_body> claim_request() {
    return make_request(http::verb::post, "/agent/v1/claim",
                        json::serialize(json::object{{"freeSlots", 0}, {"waitSeconds", 0}}),
                        {{"authorization", "Bearer " + agent_token_}});
  }
};

TEST_F(ConnectionLimitTest, AuthenticatedConnectionsPastTheLimitAreClosedUntilOneEnds) {
  asio::io_context io;
  std::vector<tcp::socket> open;
  for (int i = 0; i < 4; ++i) {
    open.push_back(raw::connect(io, port_));
    ASSERT_TRUE(served(open.back())) << "connection " << i;
  }
  tcp::socket extra = raw::connect(io, port_);
  EXPECT_FALSE(served(extra));
  open.front().close();
  // The server sees that close on its own time: fresh connections until one is served.
  bool later = false;
  for (int attempt = 0; attempt < 1000 && !later; ++attempt) {
    tcp::socket next = raw::connect(io, port_);
    later = served(next);
    if (!later) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(later);
  for (auto& s : open) {
    if (!s.is_open()) continue;
    EXPECT_TRUE(served(s));
  }
}

TEST_F(ConnectionLimitTest, IdleAndSlowUnauthenticatedClientsDoNotLockOutAnAgent) {
  register_agent();
  asio::io_context io;
  tcp::socket kept = raw::connect(io, port_);
  ASSERT_TRUE(served(kept, claim_request())) << "the agent holds a keep-alive connection";
  // Ten connections without a credential, more than the four slots: silent ones and ones whose
  // headers never end.
  std::vector<tcp::socket> holders;
  for (int i = 0; i < 10; ++i) {
    holders.push_back(raw::connect(io, port_));
    if (i % 2 == 1) raw::write_some_bytes(holders.back(), kUnfinishedHead);
  }
  tcp::socket fresh = raw::connect(io, port_);
  EXPECT_TRUE(served(fresh, claim_request())) << "a new connection of the agent gets in";
  EXPECT_TRUE(served(kept, claim_request())) << "and the one it kept is still open";
  // The oldest holders made room: the server closed them.
  EXPECT_TRUE(raw::closed_by_server(holders[0])) << "silent";
  EXPECT_TRUE(raw::closed_by_server(holders[1])) << "dripping headers";
}

class PerClientLimitTest : public HttpApiTest {
 protected:
  void configure(ControlConfig& cfg) override {
    cfg.max_connections_per_client = 3;
    cfg.header_timeout_seconds = 300;
  }
};

TEST_F(PerClientLimitTest, OneAddressHoldsAtMostItsShare) {
  asio::io_context io;
  std::vector<tcp::socket> a;
  for (int i = 0; i < 3; ++i) {
    a.push_back(raw::connect(io, port_, "127.0.0.1"));
    ASSERT_TRUE(served(a.back())) << "connection " << i;
  }
  tcp::socket a_extra = raw::connect(io, port_, "127.0.0.1");
  EXPECT_FALSE(served(a_extra)) << "a fourth from 127.0.0.1 is closed";
  tcp::socket b = raw::connect(io, port_, "127.0.0.2");
  EXPECT_TRUE(served(b)) << "another address still gets in";
  for (auto& s : a) EXPECT_TRUE(served(s)) << "the three keep their slots";

  // At its limit with connections that never authenticated, an address's own oldest one makes
  // room for its next: its unauthenticated connections cannot shut out its agent.
  std::vector<tcp::socket> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(raw::connect(io, port_, "127.0.0.3"));
  tcp::socket agent = raw::connect(io, port_, "127.0.0.3");
  EXPECT_TRUE(served(agent));
  EXPECT_TRUE(raw::closed_by_server(idle[0]));
}

// A client that sends no credential gets one answer per connection.
TEST_F(HttpApiTest, OnlyAnAuthenticatedRequestKeepsItsConnection) {
  const std::vector<std::pair<std::string, Headers>> unauthenticated{
      {"/healthz", {}},
      {"/api/v1/workspaces", {{"authorization", "Bearer wrong"}}},
      {"/api/v1/nothing", {}}};
  asio::io_context io;
  for (const auto& [target, headers] : unauthenticated) {
    tcp::socket socket = raw::connect(io, port_);
    http::write(socket, make_request(http::verb::get, target, {}, headers));
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> answer;
    http::read(socket, buffer, answer);
    EXPECT_FALSE(answer.get().keep_alive()) << target << " answered with Connection: close";
    EXPECT_TRUE(raw::closed_by_server(socket)) << target;
  }
  tcp::socket socket = raw::connect(io, port_);
  EXPECT_TRUE(served(socket));
  EXPECT_TRUE(served(socket)) << "an authenticated connection stays open";
}

class HeaderTimeoutTest : public HttpApiTest {
 protected:
  void configure(ControlConfig& cfg) override { cfg.header_timeout_seconds = 1; }
};

TEST_F(HeaderTimeoutTest, HeadersThatDoNotArriveCloseTheConnectionButIdleKeepAliveDoesNot) {
  asio::io_context io;
  tcp::socket kept = raw::connect(io, port_);
  ASSERT_TRUE(served(kept));
  tcp::socket silent = raw::connect(io, port_);
  tcp::socket dripping = raw::connect(io, port_);
  raw::write_some_bytes(dripping, kUnfinishedHead);
  EXPECT_TRUE(raw::closed_by_server(silent));
  EXPECT_TRUE(raw::closed_by_server(dripping));
  // Between two requests a keep-alive connection has the idle timeout, not the header timeout:
  // a header timeout started for `kept` before those two began theirs, and they have run out.
  EXPECT_TRUE(served(kept));
}

class TempBudgetTest : public HttpApiTest {
 protected:
  void configure(ControlConfig& cfg) override { cfg.max_temp_bytes = 64 * 1024; }
  // A plan Run held by the test's agent: uploads are admitted only for the lease's own Run.
  void lease_a_plan() {
    register_agent();
    ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + create_capsule() + "/plan").status, 201u);
    job_ = claim_job();
    ASSERT_FALSE(job_.run_id.empty());
  }
  std::string upload(const std::string& framing, const std::string& kind = "plan") {
    return head("PUT /agent/v1/runs/" + job_.run_id + "/artifacts/" + kind,
                "Authorization: Bearer " + agent_token_ + "\r\nX-Takosumi-Lease: " + job_.lease +
                    "\r\n" + framing);
  }
  AgentJob job_;
};

// The lease, the Run's type and the kind's size are checked on the request head: a body that
// could not be taken is never read.
TEST_F(TempBudgetTest, AnUploadThatCouldNotBeTakenIsRefusedAtItsHead) {
  lease_a_plan();
  const fs::path tmp = dir_.path() / "data/tmp";
  asio::io_context io;
  tcp::socket wrong = raw::connect(io, port_);
  raw::write_some_bytes(wrong, head("PUT /agent/v1/runs/" + job_.run_id + "/artifacts/plan",
                                    "Authorization: Bearer " + agent_token_ +
                                        "\r\nX-Takosumi-Lease: not-the-lease\r\n"
                                        "Content-Length: 40960\r\nExpect: 100-continue\r\n"));
  const raw::Reply refused = raw::read_reply(wrong);
  EXPECT_EQ(refused.status, 409u) << refused.code;
  tcp::socket state = raw::connect(io, port_);
  raw::write_some_bytes(state, upload("Content-Length: 40960\r\nExpect: 100-continue\r\n", "state"));
  EXPECT_EQ(raw::read_reply(state).status, 400u) << "a plan Run uploads no state";
  tcp::socket view = raw::connect(io, port_);
  raw::write_some_bytes(view, upload("Content-Length: " + std::to_string((32u << 20) + 1) +
                                         "\r\nExpect: 100-continue\r\n", "plan_view"));
  EXPECT_EQ(raw::read_reply(view).status, 413u) << "a plan view is at most 32 MiB";
  EXPECT_EQ(raw::bytes_under(tmp), 0u);
}

TEST_F(TempBudgetTest, UploadsInProgressShareTheBudgetOfTemporaryBytes) {
  lease_a_plan();
  const fs::path tmp = dir_.path() / "data/tmp";
  asio::io_context io;
  // A holds 40 KiB of the 64: its 100 Continue says the server has admitted and reserved it.
  tcp::socket a = raw::connect(io, port_);
  raw::write_some_bytes(a, upload("Content-Length: 40960\r\nExpect: 100-continue\r\n"));
  beast::flat_buffer a_buffer;
  http::response_parser<http::empty_body> cont;
  http::read_header(a, a_buffer, cont);
  ASSERT_EQ(cont.get().result(), http::status::continue_);

  // B declares 40 KiB more: refused at its head, nothing of it written.
  tcp::socket b = raw::connect(io, port_);
  raw::write_some_bytes(b, upload("Content-Length: 40960\r\n") + std::string(40960, 'b'));
  const raw::Reply rb = raw::read_reply(b);
  EXPECT_EQ(rb.status, 503u);
  EXPECT_EQ(rb.code, "temp_space_exhausted");

  // C does not say how long it is: refused once it passes the budget, its partial file removed.
  tcp::socket c = raw::connect(io, port_);
  std::string chunked = upload("Transfer-Encoding: chunked\r\n");
  for (int i = 0; i < 5; ++i) chunked += "2000\r\n" + std::string(8192, 'c') + "\r\n";
  raw::write_some_bytes(c, chunked + "0\r\n\r\n");
  const raw::Reply rc = raw::read_reply(c);
  EXPECT_EQ(rc.status, 503u);
  EXPECT_EQ(rc.code, "temp_space_exhausted");
  EXPECT_EQ(raw::bytes_under(tmp), 0u);  // A has sent nothing yet; C's 24 KiB are gone

  // A's body is read and handed over (no such Run: not 503), then its file is removed too.
  raw::write_some_bytes(a, std::string(40960, 'a'));
  const raw::Reply ra = raw::read_reply(a, a_buffer);
  EXPECT_TRUE(ra.answered);
  EXPECT_NE(ra.status, 503u);
  EXPECT_NE(ra.status, 0u);
  // With A done, 40 KiB fit again.
  tcp::socket d = raw::connect(io, port_);
  raw::write_some_bytes(d, upload("Content-Length: 40960\r\n") + std::string(40960, 'd'));
  const raw::Reply rd = raw::read_reply(d);
  EXPECT_TRUE(rd.answered);
  EXPECT_NE(rd.status, 503u);
}

}  // namespace
}  // namespace takosumi::controlplane
