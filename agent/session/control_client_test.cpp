#include "agent/session/control_client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <deque>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi::agent {
namespace {

// Answers queued responses in order and records the requests it saw.
class FakeTransport final : public HttpTransport {
 public:
  boost::asio::awaitable<Result<HttpResponse>> async_request(HttpRequest request) override {
    requests.push_back(request);
    auto next = std::move(answers.front());
    answers.pop_front();
    co_return next;
  }
  std::deque<Result<HttpResponse>> answers;
  std::vector<HttpRequest> requests;
};

template <class T>
T run(boost::asio::awaitable<T> a) {
  boost::asio::io_context io;
  auto fut = boost::asio::co_spawn(io, std::move(a), boost::asio::use_future);
  io.run();
  return fut.get();
}

TEST(ControlClient, RegisterKeepsTokenForLaterCalls) {
  FakeTransport t;
  t.answers.push_back(HttpResponse{200, R"({"agentId":"agt_1","agentToken":"tok"})"});
  t.answers.push_back(HttpResponse{200, R"({"jobs":[]})"});
  ControlClient c(t);
  auto id =
      run(c.async_register({{"w", "0", {}, 1, "b", "s"}, "", ""}, SecretBytes::from_string("pool")));
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "agt_1");
  EXPECT_EQ(t.requests[0].headers.at("Authorization"), "Bearer pool");
  EXPECT_EQ(t.requests[0].body.find("pool"), std::string::npos);
  auto jobs = run(c.async_claim(2, 0));
  ASSERT_TRUE(jobs);
  EXPECT_TRUE(jobs->empty());
  EXPECT_EQ(t.requests[1].headers.at("Authorization"), "Bearer tok");
}

TEST(ControlClient, RegistrationFetchesAChallengeAndSendsTheSignedProof) {
  FakeTransport t;
  t.answers.push_back(HttpResponse{200, R"({"challenge":"c1","expiresAt":60})"});
  t.answers.push_back(HttpResponse{200, R"({"agentId":"agt_1","agentToken":"tok"})"});
  t.answers.push_back(HttpResponse{200, R"({"expiresAt":60})"});
  ControlClient c(t);
  const auto pool = SecretBytes::from_string("pool");
  auto challenge = run(c.async_register_challenge(pool));
  ASSERT_TRUE(challenge) << challenge.error().message;
  EXPECT_EQ(*challenge, "c1");
  EXPECT_EQ(t.requests[0].target, "/agent/v1/register/challenge");
  auto id = run(c.async_register({{"w", "0", {}, 1, "b", "s"}, *challenge, "sig"}, pool));
  ASSERT_TRUE(id) << id.error().message;
  auto sent = parse_object(t.requests[1].body, 1 << 20);
  ASSERT_TRUE(sent);
  EXPECT_EQ(sent->at("challenge"), "c1");
  EXPECT_EQ(sent->at("signature"), "sig");
  auto missing = run(c.async_register_challenge(pool));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, errc::kProtocolError);
}

TEST(ControlClient, ErrorBodyCodeIsKeptFor4xxAndRetryableFor5xx) {
  FakeTransport t;
  t.answers.push_back(HttpResponse{409, R"({"error":{"code":"lease_lost","message":"expired"}})"});
  t.answers.push_back(HttpResponse{503, R"({"error":{"code":"internal","message":"x"}})"});
  t.answers.push_back(std::unexpected(Error{std::string(errc::kUnavailable), "connect refused"}));
  ControlClient c(t);
  auto a = run(c.async_heartbeat("run_1", "l"));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, errc::kLeaseLost);
  EXPECT_FALSE(is_retryable(a.error()));
  EXPECT_NE(a.error().message.find("expired"), std::string::npos);
  auto b = run(c.async_heartbeat("run_1", "l"));
  ASSERT_FALSE(b);
  EXPECT_TRUE(is_retryable(b.error()));
  auto d = run(c.async_heartbeat("run_1", "l"));
  ASSERT_FALSE(d);
  EXPECT_TRUE(is_retryable(d.error()));
}

TEST(ControlClient, A413IsPayloadTooLargeWhoeverAnsweredIt) {
  FakeTransport t;
  // A reverse proxy answers without the control plane's JSON error.
  t.answers.push_back(HttpResponse{413, "<html>Request Entity Too Large</html>"});
  t.answers.push_back(
      HttpResponse{413, R"({"error":{"code":"payload_too_large","message":"over 16 MiB"}})"});
  ControlClient c(t);
  auto proxied = run(c.async_put_report("run_1", "l", "{}"));
  ASSERT_FALSE(proxied);
  EXPECT_EQ(proxied.error().code, errc::kPayloadTooLarge);
  EXPECT_FALSE(is_retryable(proxied.error()));
  EXPECT_EQ(t.requests[0].method, "PUT");
  EXPECT_EQ(t.requests[0].target, "/agent/v1/runs/run_1/report");
  EXPECT_EQ(t.requests[0].headers.at("X-Takosumi-Lease"), "l");
  auto direct = run(c.async_complete("run_1", "{}"));
  ASSERT_FALSE(direct);
  EXPECT_EQ(direct.error().code, errc::kPayloadTooLarge);
  EXPECT_NE(direct.error().message.find("over 16 MiB"), std::string::npos);
}

TEST(ControlClient, ClaimParsesJobsAndRefusesMoreThanAsked) {
  FakeTransport t;
  const std::string job =
      R"({"runId":"run_1","leaseToken":"l1","leaseExpiresAt":5,"manifest":{"payload":"cA==","signature":"cw=="}})";
  t.answers.push_back(HttpResponse{200, R"({"jobs":[)" + job + "]}"});
  t.answers.push_back(HttpResponse{200, R"({"jobs":[)" + job + "," + job + "]}"});
  ControlClient c(t);
  auto one = run(c.async_claim(1, 0));
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].lease_token, "l1");
  EXPECT_EQ((*one)[0].manifest.signature, "cw==");
  auto two = run(c.async_claim(1, 0));
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().code, errc::kProtocolError);
}

TEST(ControlClient, MalformedAnswerIsAProtocolError) {
  FakeTransport t;
  t.answers.push_back(HttpResponse{200, "not json"});
  ControlClient c(t);
  auto r = run(c.async_heartbeat("run_1", "l"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kProtocolError);
}

}  // namespace
}  // namespace takosumi::agent
