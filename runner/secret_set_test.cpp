#include "runner/secret_set.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace takosumi::runner {
namespace {

TEST(SecretSet, RefusesValuesShorterThanTheMinimum) {
  SecretSet set;
  EXPECT_FALSE(set.add("true"));
  EXPECT_FALSE(set.add("12345"));
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.redact("port 12345 is true"), "port 12345 is true");
  EXPECT_TRUE(set.add("123456"));
  EXPECT_EQ(set.size(), 1u);
}

TEST(SecretSet, RedactsEveryOccurrence) {
  SecretSet set;
  ASSERT_TRUE(set.add("hunter22"));
  EXPECT_EQ(set.redact("a hunter22 b hunter22hunter22"), "a [REDACTED] b [REDACTED][REDACTED]");
  EXPECT_TRUE(set.contains_secret("xxhunter22xx"));
  EXPECT_FALSE(set.contains_secret("hunter2"));
}

TEST(SecretSet, DuplicatesAreIgnored) {
  SecretSet set;
  EXPECT_TRUE(set.add("hunter22"));
  EXPECT_TRUE(set.add("hunter22"));
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.max_length(), 8u);
}

TEST(SecretSet, LongestMatchWinsForNestedSecrets) {
  SecretSet set;
  ASSERT_TRUE(set.add("abcdef"));
  ASSERT_TRUE(set.add("abcdefghij"));
  ASSERT_TRUE(set.add("xabcdefghijx"));
  EXPECT_EQ(set.redact("1 abcdefghij 2"), "1 [REDACTED] 2");
  EXPECT_EQ(set.redact("1 abcdefgh 2"), "1 [REDACTED]gh 2");
  EXPECT_EQ(set.redact("1 xabcdefghijx 2"), "1 [REDACTED] 2");
  EXPECT_EQ(set.max_length(), 12u);
}

TEST(SecretSet, OverlappingSecretsAreTakenLeftToRight) {
  SecretSet set;
  ASSERT_TRUE(set.add("secret-one"));
  ASSERT_TRUE(set.add("one-and-two"));
  EXPECT_EQ(set.redact("secret-one-and-two"), "[REDACTED]-and-two");
  EXPECT_EQ(set.redact("my one-and-two"), "my [REDACTED]");
}

TEST(SecretSet, TheMarkerIsNeverRescanned) {
  SecretSet set;
  ASSERT_TRUE(set.add("REDACTED]"));
  ASSERT_TRUE(set.add("password1"));
  EXPECT_EQ(set.redact("password1"), "[REDACTED]");
}

TEST(SecretSet, RedactsTheJsonEscapedForms) {
  SecretSet set;
  ASSERT_TRUE(set.add("pa\"ss\\wo<rd>&\n"));
  // As in a JSON string, and as `tofu show -json` (Go) escapes it.
  EXPECT_EQ(set.redact(R"({"v":"pa\"ss\\wo<rd>&\n"})"), R"({"v":"[REDACTED]"})");
  EXPECT_EQ(set.redact(R"({"v":"pa\"ss\\wo\u003crd\u003e\u0026\n"})"), R"({"v":"[REDACTED]"})");
}

TEST(SecretSet, StoresLongLinesOfAMultiLineValue) {
  SecretSet set;
  ASSERT_TRUE(set.add("header-line\nsixteen-bytes-or-more\r\nshort\n"));
  // tofu prints multi-line strings as indented heredocs: each long line is caught on its own.
  EXPECT_EQ(set.redact("      sixteen-bytes-or-more"), "      [REDACTED]");
  EXPECT_EQ(set.redact("short header-line"), "short header-line");
  EXPECT_EQ(set.size(), 1u);
}

TEST(SecretSet, AMatchSpanningLinesKeepsItsLineBreaks) {
  SecretSet set;
  ASSERT_TRUE(set.add("line-a-xx\nline-b-yy\n"));
  EXPECT_EQ(set.redact("pre line-a-xx\nline-b-yy\npost"), "pre [REDACTED]\n[REDACTED]\npost");
}

TEST(SecretSet, MatchesACrlfValueInLfText) {
  SecretSet set;
  ASSERT_TRUE(set.add("abc-def\r\nghi-jkl"));
  EXPECT_EQ(set.redact("abc-def\nghi-jkl"), "[REDACTED]\n[REDACTED]");
}

TEST(SecretSet, RedactPrefixHoldsWhatCouldStartASecret) {
  SecretSet set;
  ASSERT_TRUE(set.add("secret-value"));
  auto part = set.redact_prefix("a secret-value b secret-v");
  EXPECT_EQ(part.redacted, "a [REDACTED] b ");
  EXPECT_EQ(part.consumed, 17u);
  part = set.redact_prefix("nothing to hold");
  EXPECT_EQ(part.redacted, "nothing to hold");
  EXPECT_EQ(part.consumed, 15u);
}

TEST(SecretSet, RedactPrefixHoldsAShorterMatchThatALongerSecretMayExtend) {
  SecretSet set;
  ASSERT_TRUE(set.add("abcdef"));
  ASSERT_TRUE(set.add("abcdef-and-more"));
  EXPECT_EQ(set.redact_prefix("x abcdef-an").consumed, 2u);
  EXPECT_EQ(set.redact_prefix("x abcdef.").redacted, "x [REDACTED].");
}

TEST(SecretSet, ReadersAndAWriterMayRunConcurrently) {
  SecretSet set;
  std::thread writer([&] {
    for (int i = 0; i < 500; ++i) set.add("secret-number-" + std::to_string(i));
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r)
    readers.emplace_back([&] {
      for (int i = 0; i < 500; ++i) (void)set.redact("log line with secret-number-1 in it");
    });
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(set.size(), 500u);
  EXPECT_EQ(set.redact("x secret-number-499 y"), "x [REDACTED] y");
}

}  // namespace
}  // namespace takosumi::runner
