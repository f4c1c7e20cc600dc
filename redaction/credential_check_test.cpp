#include "redaction/credential_check.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <string>

#include "tests/support/encodings.hpp"
#include "tests/support/pem_text.hpp"

namespace takosumi::redaction {
namespace {

using takosumi::testing::pem_body;
using takosumi::testing::pem_line;

TEST(CredentialReason, RefusesCredentialShapesWithoutQuotingThem) {
  const std::pair<std::string, std::string> cases[] = {
      {"postgres://app:pw123456@db:5432/x", "URL with a password in its userinfo"},
      {pem_line("BEGIN", "OPENSSH") + "\n" + pem_body() + "\n" + pem_line("END", "OPENSSH") + "\n",
       "private key block"},
      {"Authorization: Bearer abcdef123456", "Authorization header"},
      {"Bearer abcdef123456", "Bearer or Basic token"},
      {"Basic dXNlcjpwYXNz", "Bearer or Basic token"},
      {"user=bob\npassword=hunter22", "password-style key/value pair"},
      {"AKIAIOSFODNN7EXAMPLE", "AWS access key id"},
      {"key ASIAY34FZKBOKMUTVV7A,", "AWS access key id"},
      {"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "JSON Web Token"},
      {"ghp_0123456789abcdefghijABCDEFGHIJ012345", "GitHub token"},
      {"github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "GitHub token"},
      {"xoxb-1234567890-abcdefghij", "Slack token"},
  };
  for (const auto& [value, reason] : cases) {
    auto got = credential_reason(value);
    ASSERT_TRUE(got.has_value()) << value;
    EXPECT_EQ(*got, reason) << value;
    EXPECT_EQ(got->find(value), std::string::npos);
  }
}

TEST(CredentialReason, PassesOrdinaryOutputValues) {
  for (const std::string value : {
           "https://example.com/x", "https://example.com:8443/a?b=c#d", "db.internal",
           "ssh://git@github.com/org/repo", "git@github.com:org/repo.git", "i-0123456789abcdef0",
           "arn:aws:s3:::my-bucket", "ami-12345678", "10.0.0.1", "AKIA0123",
           "AKIAIOSFODNN7EXAMPLEXX", "eyJ", "eyJhbGciOiJIUzI1NiJ9", "ghp_short",
           "4bbcdc4e-eff9-9af5-3205-2624b56bd55a", "token_ttl = 30", "(sensitive value)",
           "uses basic authentication", "xoxb-short", "plain text, nothing to see",
           "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
       })
    EXPECT_EQ(credential_reason(value), std::nullopt) << value;
}

TEST(CredentialReason, WalksEveryStringOfAJsonValue) {
  SecretSet known;
  auto parse = [](const char* text) { return boost::json::parse(text); };
  EXPECT_EQ(
      credential_reason(parse(R"({"url": "https://example.com", "n": 3, "ok": true})"), known),
      std::nullopt);
  EXPECT_EQ(credential_reason(parse(R"({"a": ["ok", {"b": "postgres://u:p@h/db"}]})"), known),
            "URL with a password in its userinfo");
  EXPECT_EQ(credential_reason(parse(R"({"password=hunter22": 1})"), known),
            "password-style key/value pair");
}

TEST(CredentialReason, RefusesAValueContainingASecretTheRunHolds) {
  SecretSet known;
  ASSERT_TRUE(known.add("sekrit-value-1"));
  ASSERT_TRUE(known.add("73310042"));
  const std::string held = "contains the value of a secret this Run holds";
  EXPECT_EQ(
      credential_reason(boost::json::parse(R"(["x", "prefix sekrit-value-1 suffix"])"), known),
      held);
  EXPECT_EQ(credential_reason(boost::json::parse(R"({"pin": 73310042})"), known), held);
  EXPECT_EQ(credential_reason(boost::json::parse(R"({"pin": 7331004})"), known), std::nullopt);
}

TEST(CredentialReason, RefusesAnEncodedSecretTheRunHolds) {
  using takosumi::testing::base64;
  SecretSet known;
  const std::string secret = "canary/Conn+value?42";
  ASSERT_TRUE(known.add(secret));
  // filebase64("/proc/self/environ"): the value sits at any offset of a larger blob.
  using namespace std::string_literals;
  for (const std::string& before : {""s, "A"s, "AB"s, "PATH=/usr/bin\0TOKEN="s})
    for (const bool url : {false, true}) {
      const auto blob = base64(before + secret + std::string("\0HOME=/x", 8), url);
      EXPECT_EQ(credential_reason(boost::json::value(blob), known),
                "contains a base64 encoding of a secret this Run holds")
          << before.size() << (url ? " url" : "");
    }
  EXPECT_EQ(credential_reason(boost::json::value(takosumi::testing::hex(secret, true)), known),
            "contains a hex encoding of a secret this Run holds");
  EXPECT_EQ(credential_reason(boost::json::parse(R"({"u": "https://x/?t=canary%2FConn%2Bvalue%3F42"})"),
                              known),
            "contains a percent-encoding of a secret this Run holds");
  // The reason never carries the value or its encoding.
  const auto reason = credential_reason(boost::json::value(base64(secret)), known);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->find("canary"), std::string::npos);
}

TEST(CredentialReason, APieceOfASecretIsNotRefused) {
  SecretSet known;
  ASSERT_TRUE(known.add("canary/Conn+value?42"));
  // Logs hide 8-byte pieces; an Output sharing a piece is still an ordinary value.
  EXPECT_EQ(credential_reason(boost::json::value("see canary/Co for details"), known), std::nullopt);
}

}  // namespace
}  // namespace takosumi::redaction
