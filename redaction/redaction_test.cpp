#include "redaction/redaction.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/support/pem_text.hpp"

namespace takosumi::redaction {
namespace {

using takosumi::testing::pem_body;
using takosumi::testing::pem_line;

struct Stream {
  std::shared_ptr<SecretSet> secrets = std::make_shared<SecretSet>();
  std::vector<std::string> out;
  LogRedactor redactor{secrets, [this](std::string_view line) { out.emplace_back(line); }};

  void feed(const std::vector<std::string>& lines) {
    for (const auto& l : lines) redactor(l);
  }
};

using Lines = std::vector<std::string>;

TEST(RedactText, ExactValuesThenPatterns) {
  SecretSet secrets;
  ASSERT_TRUE(secrets.add("my-secret-value"));
  EXPECT_EQ(redact_text(secrets, "x my-secret-value y\npassword=hunter22"),
            "x [REDACTED] y\npassword=[REDACTED]");
}

TEST(LogRedactor, PassesLinesOnAtOnceWhenNothingCouldStartASecret) {
  Stream s;
  ASSERT_TRUE(s.secrets->add("my-secret-value"));
  s.feed({"plain line", "has my-secret-value inside", "  + id = (known after apply)"});
  EXPECT_EQ(s.out, (Lines{"plain line", "has [REDACTED] inside", "  + id = (known after apply)"}));
}

TEST(LogRedactor, RedactsAMultiLinePemSecretFedLineByLine) {
  Stream s;
  // Short body lines: only the whole value can match them, not the per-line variants.
  const std::string pem =
      "-----BEGIN TEST KEY-----\nk1-abcde\nk2-fghij\nk3-klmno\n-----END TEST KEY-----\n";
  ASSERT_TRUE(s.secrets->add(pem));
  s.feed({"before", "-----BEGIN TEST KEY-----", "k1-abcde", "k2-fghij"});
  EXPECT_EQ(s.out, (Lines{"before"}));  // the rest may still be the key
  s.feed({"k3-klmno", "-----END TEST KEY-----", "after"});
  EXPECT_EQ(s.out, (Lines{"before", "[REDACTED]", "[REDACTED]", "[REDACTED]", "[REDACTED]",
                          "[REDACTED]", "after"}));
}

TEST(LogRedactor, RedactsAPrivateKeyBlockByPatternAndByValue) {
  Stream s;
  const std::string body = pem_body();
  ASSERT_TRUE(s.secrets->add(pem_line("BEGIN", "RSA") + "\n" + body + "\n" + pem_line("END", "RSA")));
  s.feed({pem_line("BEGIN", "RSA"), body, pem_line("END", "RSA"), "unknown key:", pem_line("BEGIN"),
          pem_body(6), pem_line("END")});
  s.redactor.flush();
  EXPECT_EQ(s.out, (Lines{"[REDACTED]", "[REDACTED]", "[REDACTED]", "unknown key:",
                          pem_line("BEGIN"), "[REDACTED]", pem_line("END")}));
}

TEST(LogRedactor, RedactsASecretSplitAcrossTwoLines) {
  Stream s;
  ASSERT_TRUE(s.secrets->add("first-half\nsecond-half"));
  s.redactor("value is first-half");
  EXPECT_TRUE(s.out.empty());
  s.redactor("second-half and more");
  EXPECT_EQ(s.out, (Lines{"value is [REDACTED]", "[REDACTED] and more"}));
}

TEST(LogRedactor, ReleasesHeldTextOnceItCannotBeASecret) {
  Stream s;
  ASSERT_TRUE(s.secrets->add("first-half\nsecond-half"));
  s.feed({"value is first-half", "something else"});
  EXPECT_EQ(s.out, (Lines{"value is first-half", "something else"}));
}

TEST(LogRedactor, UsesValuesAddedWhileStreaming) {
  Stream s;
  s.feed({"late-secret-1 before it is known"});
  ASSERT_TRUE(s.secrets->add("late-secret-1"));
  s.feed({"now late-secret-1 is known"});
  EXPECT_EQ(s.out, (Lines{"late-secret-1 before it is known", "now [REDACTED] is known"}));
}

TEST(LogRedactor, FlushEmitsEverythingHeld) {
  Stream s;
  ASSERT_TRUE(s.secrets->add("first-half\nsecond-half"));
  s.feed({"one", "two first-half"});
  EXPECT_EQ(s.out, (Lines{"one"}));
  s.redactor.flush();
  EXPECT_EQ(s.out, (Lines{"one", "two first-half"}));
  s.feed({"three"});  // the stream goes on after a flush
  EXPECT_EQ(s.out, (Lines{"one", "two first-half", "three"}));
}

TEST(LogRedactor, ForcesOutHeldTextPastTheLimit) {
  Stream s;
  std::string huge = "start-of-huge\n";
  while (huge.size() < 2 * StreamRedactor::kMaxHeld) huge += "xyz12\n";
  ASSERT_TRUE(s.secrets->add(huge));
  s.redactor("start-of-huge");
  std::size_t fed = 1;
  while (s.out.empty() && fed < 20000) {
    s.redactor("xyz12");
    ++fed;
  }
  EXPECT_FALSE(s.out.empty());
  EXPECT_LE(fed * 6, StreamRedactor::kMaxHeld + 64);
  s.redactor.flush();
  EXPECT_EQ(s.out.size(), fed);
}

TEST(LogRedactor, EmitsOneLineForEachLineGiven) {
  Stream s;
  ASSERT_TRUE(s.secrets->add("a-b-c-d\ne-f-g-h\n"));
  s.feed({"a-b-c-d", "e-f-g-h", "", "a-b-c-d", "x"});
  s.redactor.flush();
  EXPECT_EQ(s.out, (Lines{"[REDACTED]", "[REDACTED]", "", "a-b-c-d", "x"}));
}

TEST(LogRedactor, SaysOnceWhenPiecesOfSecretsAreNoLongerIndexed) {
  Stream s;
  std::mt19937 rng(11);
  std::string big(WindowIndex::kMaxWindows / 4, 'a');
  for (auto& c : big) c = static_cast<char>('a' + rng() % 26);
  s.feed({"before"});
  ASSERT_TRUE(s.secrets->add(big));
  s.feed({"one", "two"});
  ASSERT_EQ(s.out.size(), 4u);
  EXPECT_EQ(s.out[0], "before");
  EXPECT_NE(s.out[1].find("redacted only where they appear whole"), std::string::npos) << s.out[1];
  EXPECT_EQ((Lines{s.out[2], s.out[3]}), (Lines{"one", "two"}));
}

}  // namespace
}  // namespace takosumi::redaction
