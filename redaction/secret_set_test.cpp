#include "redaction/secret_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/encodings.hpp"

namespace takosumi::redaction {
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
  EXPECT_EQ(set.max_length(), 16u);  // its hex form
}

TEST(SecretSet, LongestMatchWinsForNestedSecrets) {
  SecretSet set;
  ASSERT_TRUE(set.add("abcdef"));
  ASSERT_TRUE(set.add("abcdefghij"));
  ASSERT_TRUE(set.add("xabcdefghijx"));
  EXPECT_EQ(set.redact("1 abcdefghij 2"), "1 [REDACTED] 2");
  // "abcdefgh" is also an 8-byte piece of the longer secrets.
  EXPECT_EQ(set.redact("1 abcdefgh 2"), "1 [REDACTED] 2");
  EXPECT_EQ(set.redact("1 abcdefg 2"), "1 [REDACTED]g 2");
  EXPECT_EQ(set.redact("1 xabcdefghijx 2"), "1 [REDACTED] 2");
  EXPECT_EQ(set.max_length(), 24u);  // the hex form of the longest
}

TEST(SecretSet, OverlappingSecretsMergeIntoOneMarker) {
  SecretSet set;
  ASSERT_TRUE(set.add("secret-one"));
  ASSERT_TRUE(set.add("one-and-two"));
  // The second secret begins inside the first: "-and-two" is a piece of a secret too.
  EXPECT_EQ(set.redact("secret-one-and-two"), "[REDACTED]");
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
  part = set.redact_prefix("nothing to hold\n");
  EXPECT_EQ(part.redacted, "nothing to hold\n");
  EXPECT_EQ(part.consumed, 16u);
}

TEST(SecretSet, RedactPrefixHoldsWhatCouldBeginAPieceOfASecret) {
  SecretSet set;
  ASSERT_TRUE(set.add("Zq8dF3kP0wLx7mTb"));
  // "0wLx7mT" may be followed by "b": an 8-byte piece still arriving.
  auto part = set.redact_prefix("tofu says: 0wLx7mT");
  EXPECT_EQ(part.redacted, "tofu says: ");
  // A piece that reaches the end may grow: held whole.
  part = set.redact_prefix("tofu says: 3kP0wLx7mT");
  EXPECT_EQ(part.redacted, "tofu says: ");
  // Text that no piece contains, and a line break, end the hold.
  EXPECT_EQ(set.redact_prefix("tofu says: 3kP0wLx7m.").redacted, "tofu says: [REDACTED].");
  EXPECT_EQ(set.redact_prefix("tofu says: 3kP0wLx7m\n").consumed, 21u);
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

using takosumi::testing::base64;
using takosumi::testing::hex;

constexpr std::string_view kMarker = kRedactionMarker;

TEST(SecretSet, RedactsSplitOffPiecesOfEightBytesOrMore) {
  SecretSet set;
  ASSERT_TRUE(set.add("Zq8dF3kP0wLx7mTb2rYc"));
  // As tofu prints a value the program wrote in two flushes: each piece on its own line.
  EXPECT_EQ(set.redact("x (local-exec): Zq8dF3kP0w\nx (local-exec): Lx7mTb2rYc\n"),
            "x (local-exec): [REDACTED]\nx (local-exec): [REDACTED]\n");
  EXPECT_EQ(set.redact("a run: 3kP0wLx7 ends"), "a run: [REDACTED] ends");
  // Shorter pieces are ordinary text.
  EXPECT_EQ(set.redact("short: Zq8dF3k, 2rYc"), "short: Zq8dF3k, 2rYc");
  // An Output check looks for whole values only.
  EXPECT_FALSE(set.contains_secret("a run: 3kP0wLx7 ends"));
}

TEST(SecretSet, PiecesAndExactMatchesMergeAndKeepLineCounts) {
  SecretSet set;
  ASSERT_TRUE(set.add("AAAA-1111-BBBB"));
  ASSERT_TRUE(set.add("qrst-BBBB-9999-uvwx"));
  // An exact match and a piece of another secret that overlaps it: one marker.
  EXPECT_EQ(set.redact("<AAAA-1111-BBBB-9999>"), "<[REDACTED]>");
  ASSERT_TRUE(set.add("line-one-1234\nline-two-5678"));
  const std::string text = "pre line-one-1234\nline-two-5678 and 1111-BBBB-99\n\nBBB-9999-uv\n";
  const auto out = set.redact(text);
  EXPECT_EQ(out, "pre [REDACTED]\n[REDACTED] and [REDACTED]\n\n[REDACTED]\n");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), std::count(text.begin(), text.end(), '\n'));
}

TEST(SecretSet, PiecesOfShortWordsAreNotIndexed) {
  SecretSet set;
  ASSERT_TRUE(set.add("correct horse battery staple"));
  EXPECT_EQ(set.redact("the battery is low"), "the battery is low");
  EXPECT_EQ(set.redact("say correct horse battery staple"), "say [REDACTED]");
}

TEST(SecretSet, PiecesOfLongWordsOfAValueWithWhitespaceAreIndexed) {
  SecretSet set;
  ASSERT_TRUE(set.add("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.Zm9vYmFyYmF6"));
  EXPECT_EQ(set.redact("got eyJhbGciOiJIUzI1NiJ9.eyJz"), "got [REDACTED]");
  EXPECT_EQ(set.redact("Bearer tokens"), "Bearer tokens");  // "Bearer" is a short word
  // PEM armour is a format, not a secret: "CERTIFICATE-----" is no piece of one.
  SecretSet pem;
  ASSERT_TRUE(pem.add("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xhdWRl\n"
                      "-----END CERTIFICATE-----\n"));
  EXPECT_EQ(pem.redact("-----BEGIN CERTIFICATE-----"), "-----BEGIN CERTIFICATE-----");
}

// value inside a larger base64 blob, after `before` bytes and followed by more: every character
// whose six bits come from the value alone is inside the marker, the rest is left.
void expect_embedded_base64_redacted(const SecretSet& set, std::string_view value,
                                     std::size_t before, bool url) {
  SCOPED_TRACE("offset " + std::to_string(before) + (url ? " url-safe" : " standard"));
  const std::string blob = base64(std::string(before, '\x7f') + std::string(value) + "\x01>?tail", url);
  const std::size_t first = (8 * before + 5) / 6;
  const std::size_t end = 8 * (before + value.size()) / 6;
  const std::string expected = blob.substr(0, first) + std::string(kMarker) + blob.substr(end);
  EXPECT_EQ(set.redact("data: " + blob + "\n"), "data: " + expected + "\n");
  EXPECT_EQ(set.find_form(blob), SecretForm::base64);
}

TEST(SecretSet, RedactsBase64AtEveryAlignmentInBothAlphabets) {
  SecretSet set;
  // Bytes whose encodings use '+' and '/' (or '-' and '_'), so the two alphabets differ.
  const std::string value = "s3cr\xfb\xff\xbe>?~-v4lue";
  ASSERT_TRUE(set.add(value));
  ASSERT_NE(base64(value, false), base64(value, true));
  for (const bool url : {false, true})
    for (std::size_t before = 0; before < 6; ++before)
      expect_embedded_base64_redacted(set, value, before, url);
  // The whole value encoded on its own: only the final character and padding remain.
  EXPECT_EQ(set.redact(base64(value, false)), std::string(kMarker) + "Q==");
}

TEST(SecretSet, RedactsHexInBothCases) {
  SecretSet set;
  ASSERT_TRUE(set.add("hex-me-please"));
  const std::string lower = hex("hex-me-please", false);
  const std::string upper = hex("hex-me-please", true);
  ASSERT_NE(lower, upper);
  EXPECT_EQ(set.redact("id=" + lower + ";"), "id=[REDACTED];");
  EXPECT_EQ(set.redact("ID=" + upper + ";"), "ID=[REDACTED];");
  EXPECT_EQ(set.find_form("0x" + upper), SecretForm::hex);
}

TEST(SecretSet, RedactsBothPercentEncodings) {
  SecretSet set;
  ASSERT_TRUE(set.add("p@ss word/+x~y"));
  // Go's url.QueryEscape, and the form with %20 for the space.
  EXPECT_EQ(set.redact("?q=p%40ss+word%2F%2Bx~y&n=1"), "?q=[REDACTED]&n=1");
  EXPECT_EQ(set.redact("/p%40ss%20word%2F%2Bx~y/"), "/[REDACTED]/");
  EXPECT_EQ(set.find_form("p%40ss%20word%2F%2Bx~y"), SecretForm::percent);
  // A value with nothing to escape has no separate percent form.
  SecretSet plain;
  ASSERT_TRUE(plain.add("plain-value_1.0~x"));
  EXPECT_EQ(plain.find_form("plain-value_1.0~x"), SecretForm::value);
}

TEST(SecretSet, PiecesOfAnEncodingAreRedactedToo) {
  SecretSet set;
  ASSERT_TRUE(set.add("an-api-key-0123456789"));
  const std::string encoded = base64("an-api-key-0123456789", false);
  // A base64 dump wrapped over two lines.
  const auto out = set.redact(encoded.substr(0, 14) + "\n" + encoded.substr(14) + "\n");
  EXPECT_EQ(out, "[REDACTED]\n[REDACTED]\n");
}

TEST(SecretSet, AStringLongerThanTheComparedPrefixMatchesOnlyWhole) {
  SecretSet set;
  std::string secret;  // short words: no pieces
  for (int i = 0; secret.size() < 3 * kComparedPrefix; ++i) secret += "w" + std::to_string(i) + " ";
  ASSERT_TRUE(set.add(secret + "end"));
  EXPECT_EQ(set.redact("<" + secret + "end>"), "<[REDACTED]>");
  EXPECT_EQ(set.find_form("<" + secret + "end>"), SecretForm::value);
  // Equal on the compared bytes and in length, different in the last byte ("!" begins no piece).
  EXPECT_EQ(set.redact("<" + secret + "en!>"), "<" + secret + "en!>");
  EXPECT_FALSE(set.contains_secret(secret + "en!"));
  // A stream holds what could still become the secret, and releases it once it cannot.
  EXPECT_EQ(set.redact_prefix("x: " + secret + "en").consumed, 3u);
  EXPECT_EQ(set.redact_prefix("x: " + secret + "en!").consumed, secret.size() + 6);
}

// A module plants a long stored string and prints text that agrees with it for as long as possible
// before it differs. What a scan compares must not grow with the length of the secret: counted
// through SecretSet::work() (bytes compared and hashed), never timed.
TEST(SecretSet, WorkPerByteDoesNotGrowWithTheSecretOrWithCraftedText) {
  // Well above one pass over crafted text (3 stored strings begin with the same byte, each
  // compared on at most 64 bytes, plus one hash per byte), far below comparing whole strings.
  constexpr std::uint64_t kBound = 1024;
  for (const std::string unit : {"A", "ab "}) {
    for (const std::size_t length : {std::size_t{4} << 10, std::size_t{32} << 10}) {
      SCOPED_TRACE("unit '" + unit + "', length " + std::to_string(length));
      SecretSet set;
      std::string secret;
      while (secret.size() < length) secret += unit;
      const std::string stored = secret + "x y";
      ASSERT_TRUE(set.add(stored));
      std::string text;
      while (text.size() < (std::size_t{256} << 10)) text += unit;
      text += "C";
      EXPECT_EQ(set.redact(text).size() < text.size(), unit == "A");  // "A"s are pieces
      // "A"s are pieces: held whole; prose is held from where it agrees with the secret.
      const auto part = set.redact_prefix(text);
      if (unit == "A") EXPECT_EQ(part.consumed, 0u);
      else EXPECT_LT(text.size() - part.consumed, stored.size());
      EXPECT_FALSE(set.find_form(text).has_value());
      EXPECT_LE(set.work(), 3 * kBound * text.size());
    }
  }
}

TEST(SecretSet, TheWindowIndexIsCapped) {
  SecretSet set;
  std::mt19937 rng(7);
  std::string big(WindowIndex::kMaxWindows / 4, 'a');
  for (auto& c : big) c = static_cast<char>('a' + rng() % 26);
  ASSERT_TRUE(set.add(big));  // with its hex and base64 forms, past the cap
  EXPECT_EQ(set.redact("<" + big + ">"), "<[REDACTED]>");
  EXPECT_TRUE(set.windows_capped());
  ASSERT_TRUE(set.add("later-secret-value-42"));
  EXPECT_EQ(set.redact("x later-secret-value-42 y"), "x [REDACTED] y");  // whole: still caught
  EXPECT_EQ(set.redact("x secret-value-42 y"), "x secret-value-42 y");    // a piece: no longer
}

}  // namespace
}  // namespace takosumi::redaction
