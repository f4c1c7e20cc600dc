#include "net/control_url.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"

namespace takosumi::net {
namespace {

TEST(ControlUrlTest, ParsesSchemeHostAndPortWithDefaults) {
  auto a = parse_control_url("https://cp.example:8443", "controlPlane.url");
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "cp.example");
  EXPECT_EQ(a->port, "8443");
  auto b = parse_control_url("https://cp.example/", "k");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->port, "443");
  auto c = parse_control_url("http://[::1]:7000", "k");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->tls);
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->authority(), "[::1]:7000");
}

TEST(ControlUrlTest, RefusesWhatIsNotABaseUrl) {
  for (const char* bad : {"ftp://cp.example", "https://", "https://user:pw@cp.example",
                          "https://cp.example/api", "https://cp.example?x=1", "cp.example:443",
                          "https://cp.example:", "https://cp.example:0", "https://cp.example:99999",
                          "https://cp%2Eexample", "https://cp%00.example"}) {
    auto r = parse_control_url(bad, "controlPlane.url");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, errc::kConfigInvalid);
    EXPECT_NE(r.error().message.find("controlPlane.url"), std::string::npos);
  }
}

TEST(ControlUrlTest, PlainHttpOnlyToLoopbackUnlessAllowed) {
  for (const char* host : {"localhost", "127.0.0.1", "127.9.9.9", "::1"})
    EXPECT_TRUE(check_plain_http(false, host, false, "k", "allow")) << host;
  for (const char* host : {"10.0.0.5", "cp.example", "0.0.0.0", "localhost.example"}) {
    auto r = check_plain_http(false, host, false, "controlPlane.url", "controlPlane.allowInsecureHttp");
    ASSERT_FALSE(r) << host;
    EXPECT_EQ(r.error().code, errc::kConfigInvalid);
    EXPECT_NE(r.error().message.find("controlPlane.allowInsecureHttp"), std::string::npos);
    EXPECT_TRUE(check_plain_http(false, host, true, "k", "allow")) << host;
    EXPECT_TRUE(check_plain_http(true, host, false, "k", "allow")) << host;
  }
}

}  // namespace
}  // namespace takosumi::net
