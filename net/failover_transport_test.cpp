// Failover between control-plane replicas: a replica that cannot be reached or answers as a
// gateway or an overloaded server hands the next exchange to the next one, in turn; any other
// answer, 4xx included, is the replica's word and keeps it in use.
#include "net/failover_transport.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <deque>

#include "common/error_codes.hpp"

namespace takosumi::net {
namespace {

// A replica that answers from a script and counts what reached it.
class ScriptedReplica final : public HttpTransport {
 public:
  explicit ScriptedReplica(std::deque<Result<HttpResponse>> answers) : answers_(std::move(answers)) {}
  boost::asio::awaitable<Result<HttpResponse>> async_request(HttpRequest) override {
    ++calls;
    auto next = std::move(answers_.front());
    answers_.pop_front();
    co_return next;
  }
  int calls = 0;

 private:
  std::deque<Result<HttpResponse>> answers_;
};

Result<HttpResponse> status(unsigned code) { return HttpResponse{code, {}}; }
Result<HttpResponse> unreachable() { return fail(errc::kUnavailable, "connect: refused"); }

TEST(FailoverTransport, MovesOnFromAReplicaThatFailsAndKeepsOneThatAnswers) {
  auto a = std::make_unique<ScriptedReplica>(std::deque<Result<HttpResponse>>{
      unreachable(), status(200)});
  auto b = std::make_unique<ScriptedReplica>(std::deque<Result<HttpResponse>>{
      status(200), status(404), status(503)});
  ScriptedReplica& first = *a;
  ScriptedReplica& second = *b;
  std::vector<FailoverTransport::Replica> replicas;
  replicas.push_back({"https://a", std::move(a)});
  replicas.push_back({"https://b", std::move(b)});
  FailoverTransport transport(std::move(replicas));
  boost::asio::io_context io;
  auto exchange = [&] {
    auto done = boost::asio::co_spawn(io, transport.async_request(HttpRequest{}),
                                      boost::asio::use_future);
    io.restart();
    io.run();
    return done.get();
  };
  auto r1 = exchange();
  ASSERT_FALSE(r1) << "the failure itself is the caller's to retry";
  EXPECT_EQ(transport.current_url(), "https://b");
  EXPECT_EQ(exchange()->status, 200u);
  EXPECT_EQ(exchange()->status, 404u);
  EXPECT_EQ(transport.current_url(), "https://b") << "a 4xx is the replica's answer";
  EXPECT_EQ(exchange()->status, 503u);
  EXPECT_EQ(transport.current_url(), "https://a") << "past the last replica, back to the first";
  EXPECT_EQ(exchange()->status, 200u);
  EXPECT_EQ(first.calls, 2);
  EXPECT_EQ(second.calls, 3);
}

}  // namespace
}  // namespace takosumi::net
