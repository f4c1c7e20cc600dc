#include "redaction/pattern_redactor.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/pem_text.hpp"

namespace takosumi::redaction {
namespace {

using takosumi::testing::pem_body;
using takosumi::testing::pem_line;

std::string redact(std::string_view line) { return PatternRedactor().redact_line(line); }

std::vector<std::string> redact_lines(const std::vector<std::string>& lines) {
  PatternRedactor redactor;
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(redactor.redact_line(l));
  return out;
}

TEST(PatternRedactor, AuthorizationHeaderLosesEverythingAfterIt) {
  EXPECT_EQ(redact("> Authorization: Bearer abc.def-123"), "> Authorization: [REDACTED]");
  EXPECT_EQ(redact("authorization:token ghp_x"), "authorization:[REDACTED]");
  EXPECT_EQ(redact(R"({"Authorization": "Basic dXNlcjpwYXNz"})"),
            R"({"Authorization": [REDACTED])");
}

TEST(PatternRedactor, BearerAndBasicTokens) {
  EXPECT_EQ(redact("sending bearer eyJhbGciOi.abc.def now"), "sending bearer [REDACTED] now");
  EXPECT_EQ(redact("BASIC dXNlcjpwYXNz"), "BASIC [REDACTED]");
  EXPECT_EQ(redact("Bearer 0123456789abcdef;"), "Bearer [REDACTED];");
}

TEST(PatternRedactor, UrlPasswords) {
  EXPECT_EQ(redact("dsn postgres://app:hunter22@db.internal:5432/app?x=1"),
            "dsn postgres://[REDACTED]@db.internal:5432/app?x=1");
  EXPECT_EQ(redact("\"https://u:p@ss@host/x\""), "\"https://[REDACTED]@host/x\"");
  EXPECT_EQ(redact("postgres://app:[REDACTED]@db"), "postgres://[REDACTED]@db");
}

TEST(PatternRedactor, SecretKeyValuePairs) {
  EXPECT_EQ(redact("password=hunter22&user=bob"), "password=[REDACTED]&user=bob");
  EXPECT_EQ(redact(R"("db_password": "hunter 22", "user": "bob")"),
            R"("db_password": "[REDACTED]", "user": "bob")");
  EXPECT_EQ(redact("export AWS_SECRET_ACCESS_KEY=abc123"),
            "export AWS_SECRET_ACCESS_KEY=[REDACTED]");
  EXPECT_EQ(redact(R"(      - api_token = "tdata-sensitive-token-7731")"),
            R"(      - api_token = "[REDACTED]")");
  EXPECT_EQ(redact("client-secret: abc123"), "client-secret: [REDACTED]");
  EXPECT_EQ(redact("X-Api-Key: abcd1234"), "X-Api-Key: [REDACTED]");
  EXPECT_EQ(redact("GET /cb?access_token=abc123&state=x"),
            "GET /cb?access_token=[REDACTED]&state=x");
  EXPECT_EQ(redact("db.password=s3cr3t"), "db.password=[REDACTED]");
  EXPECT_EQ(redact("'PASSWD' : 'x y'"), "'PASSWD' : '[REDACTED]'");
  EXPECT_EQ(redact(R"({\"token\":\"abc\"})"), R"({\"token\":\"[REDACTED]\"})");
  EXPECT_EQ(redact("GOOGLE_CREDENTIALS={json}, next"), "GOOGLE_CREDENTIALS=[REDACTED], next");
}

TEST(PatternRedactor, LeavesTofusOrdinaryOutputAlone) {
  for (const std::string line : {
           "  + id                   = (known after apply)",
           "  + content              = (sensitive value)",
           "      ~ password             = (sensitive value) # forces replacement",
           "db_password = <sensitive>",
           "  + access_token = (known after apply)",
           "git clone git@github.com:org/repo.git",
           "ssh://git@github.com/org/repo",
           "  + token_ttl = 30",
           "  + max_tokens = 30",
           "  + resource \"aws_secretsmanager_secret\" \"x\" {",
           "terraform_data.secret: Creating...",
           "module.db.random_password.password: Creation complete after 0s [id=none]",
           "  ~ authorization = \"NONE\"",
           "  12:   password = var.db_password",
           "  + password = null",
           "password = \"\"",
           "password=[REDACTED]",
           "Authorization: [REDACTED]",
           "Authorization: (sensitive value)",
           "provider uses basic authentication and Bearer Tokens",
           "see https://example.com:8443/x and https://example.com/a@b",
           "Plan: 1 to add, 0 to change, 0 to destroy.",
           "-----BEGIN CERTIFICATE-----",
           "-----BEGIN RSA PUBLIC KEY-----",
       })
    EXPECT_EQ(redact(line), line);
}

TEST(PatternRedactor, PrivateKeyBlockKeepsItsHeadersAndLosesItsBody) {
  auto out = redact_lines({"key:", pem_line("BEGIN", "RSA"), pem_body(), pem_body(10), "",
                           pem_line("END", "RSA"), "after"});
  EXPECT_EQ(out, (std::vector<std::string>{"key:", pem_line("BEGIN", "RSA"), "[REDACTED]",
                                           "[REDACTED]", "", pem_line("END", "RSA"), "after"}));
}

TEST(PatternRedactor, IndentedHeredocKeyAndPgpBlock) {
  const std::string indent = "      ";
  auto out = redact_lines({indent + pem_line("BEGIN", "OPENSSH"), indent + pem_body(),
                           indent + pem_line("END", "OPENSSH"), pem_line("BEGIN", "PGP", " BLOCK"),
                           pem_body(6), pem_line("END", "PGP", " BLOCK")});
  EXPECT_EQ(out, (std::vector<std::string>{
                     indent + pem_line("BEGIN", "OPENSSH"), "[REDACTED]",
                     indent + pem_line("END", "OPENSSH"), pem_line("BEGIN", "PGP", " BLOCK"),
                     "[REDACTED]", pem_line("END", "PGP", " BLOCK")}));
}

TEST(PatternRedactor, JsonEscapedKeyOnOneLine) {
  EXPECT_EQ(redact("\"key\": \"" + pem_line("BEGIN") + "\\n" + pem_body(6) + "\\n" +
                   pem_line("END") + "\\n\""),
            "\"key\": \"" + pem_line("BEGIN") + "[REDACTED]" + pem_line("END") + "\\n\"");
}

TEST(PatternRedactor, AnUnterminatedBlockEndsAfterTheLineLimit) {
  PatternRedactor redactor;
  EXPECT_EQ(redactor.redact_line(pem_line("BEGIN", "EC")), pem_line("BEGIN", "EC"));
  for (std::size_t i = 1; i < PatternRedactor::kMaxPrivateKeyLines; ++i)
    ASSERT_EQ(redactor.redact_line("body"), "[REDACTED]") << i;
  EXPECT_EQ(redactor.redact_line("ordinary output"), "ordinary output");
}

TEST(PatternRedactor, RedactPatternsKeepsLineBreaks) {
  EXPECT_EQ(redact_patterns("a\npassword=x\n" + pem_line("BEGIN") + "\n" + pem_body(3) + "\n" +
                            pem_line("END") + "\n"),
            "a\npassword=[REDACTED]\n" + pem_line("BEGIN") + "\n[REDACTED]\n" + pem_line("END") +
                "\n");
}

}  // namespace
}  // namespace takosumi::redaction
