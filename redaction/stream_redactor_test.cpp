#include "redaction/stream_redactor.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "redaction/redacted_lines.hpp"
#include "redaction/redaction.hpp"

namespace takosumi::redaction {
namespace {

constexpr std::string_view kSecret = "Zq8dF3kP0wLx7mTb2rYc";

// Every 8-byte piece of kSecret that occurs in text.
std::vector<std::string> pieces_in(std::string_view text) {
  std::vector<std::string> found;
  for (std::size_t at = 0; at + 8 <= kSecret.size(); ++at)
    if (text.find(kSecret.substr(at, 8)) != std::string_view::npos)
      found.emplace_back(kSecret.substr(at, 8));
  return found;
}

struct Redacted {
  SecretSet secrets;
  std::string out;
  StreamRedactor redactor{&secrets, [this](std::string_view bytes) { out.append(bytes); }};

  Redacted() { EXPECT_TRUE(secrets.add(kSecret)); }
  std::string through(const std::vector<std::string_view>& chunks) {
    for (const auto chunk : chunks) redactor.feed(chunk);
    redactor.flush();
    return out;
  }
};

TEST(StreamRedactor, ASecretSplitAtAnyChunkBoundaryIsReplacedWhole) {
  const std::string text = "log: before " + std::string(kSecret) + " after\n";
  const std::string expected = "log: before [REDACTED] after\n";
  for (std::size_t i = 0; i <= text.size(); ++i)
    for (std::size_t j = i; j <= text.size(); ++j) {
      const std::string_view t = text;
      Redacted r;
      EXPECT_EQ(r.through({t.substr(0, i), t.substr(i, j - i), t.substr(j)}), expected)
          << "split at " << i << " and " << j;
    }
}

// Strings longer than kComparedPrefix are matched by their hash and held on their first bytes: the
// stream still gives what redacting the whole text at once gives, wherever the chunks end.
TEST(StreamRedactor, LongSecretsAreReplacedWholeWhereverTheChunksEnd) {
  std::string prose;  // short words: no pieces, only whole matches
  for (int i = 0; prose.size() < 2 * kComparedPrefix; ++i) prose += "w" + std::to_string(i) + " ";
  const std::string token = "tok-" + std::string(kComparedPrefix, 'q') + "-7f3a9c";
  SecretSet secrets;
  ASSERT_TRUE(secrets.add(prose + "end"));
  ASSERT_TRUE(secrets.add(token));
  const std::string text = "a " + prose + "end\nb " + prose + "enx\nc " + token + " d " +
                           prose.substr(0, 100) + "\n" + prose + "end";
  const auto whole = secrets.redact(text);
  ASSERT_EQ(whole, "a [REDACTED]\nb " + prose + "enx\nc [REDACTED] d " + prose.substr(0, 100) +
                       "\n[REDACTED]");
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    std::string out;
    StreamRedactor redactor(&secrets, [&](std::string_view bytes) { out.append(bytes); });
    redactor.feed(std::string_view(text).substr(0, cut));
    redactor.feed(std::string_view(text).substr(cut));
    redactor.flush();
    EXPECT_EQ(out, whole) << "cut at " << cut;
  }
}

TEST(StreamRedactor, OneByteAtATime) {
  const std::string text = "a " + std::string(kSecret) + "\nb " + std::string(kSecret) + "c\n";
  Redacted r;
  for (const char c : text) r.redactor.feed(std::string_view(&c, 1));
  r.redactor.flush();
  EXPECT_EQ(r.out, "a [REDACTED]\nb [REDACTED]c\n");
}

// A program writes the secret in two writes 300 ms apart; tofu's line reader flushes the first
// half after 100 ms, so tofu prints two lines with its prefix in between.
TEST(StreamRedactor, TwoPartialLinesAsTofuPrintsThem) {
  const std::string prefix = "null_resource.x (local-exec): ";
  const std::string text = prefix + std::string(kSecret.substr(0, 9)) + "\n" + prefix +
                           std::string(kSecret.substr(9)) + "\n";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    Redacted r;
    const std::string_view t = text;
    const auto out = r.through({t.substr(0, cut), t.substr(cut)});
    EXPECT_EQ(out, prefix + "[REDACTED]\n" + prefix + "[REDACTED]\n") << "cut at " << cut;
    EXPECT_TRUE(pieces_in(out).empty());
  }
}

// value printed in two writes, split `split` bytes into it, as tofu prints them: two lines with its
// prefix. Every chunk boundary is tried; neither line may carry 8 bytes of the word split.
void expect_split_word_redacted(std::string_view value, std::size_t split, std::string_view word,
                                std::string_view first, std::string_view second) {
  const std::string prefix = "null_resource.x (local-exec): ";
  const std::string text = prefix + std::string(value.substr(0, split)) + "\n" + prefix +
                           std::string(value.substr(split)) + "\n";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    SecretSet secrets;
    ASSERT_TRUE(secrets.add(value));
    std::string out;
    StreamRedactor redactor(&secrets, [&](std::string_view bytes) { out.append(bytes); });
    redactor.feed(std::string_view(text).substr(0, cut));
    redactor.feed(std::string_view(text).substr(cut));
    redactor.flush();
    EXPECT_EQ(out, prefix + std::string(first) + "\n" + prefix + std::string(second) + "\n")
        << "cut at " << cut;
    for (std::size_t at = 0; at + 8 <= word.size(); ++at)
      EXPECT_EQ(out.find(word.substr(at, 8)), std::string::npos) << word.substr(at, 8);
  }
}

TEST(StreamRedactor, APassphraseWithSpacesSplitIntoTwoPartialLines) {
  const std::string_view value = "plover xyzzy-Quux-7741-frobozz plugh";
  expect_split_word_redacted(value, 20, value.substr(7, 23), "plover [REDACTED]",
                             "[REDACTED] plugh");
}

TEST(StreamRedactor, ABearerTokenSplitIntoTwoPartialLines) {
  const std::string_view jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJydW4tNDIifQ.c2lnbmF0dXJlLWJ5dGVz";
  const std::string value = "Bearer " + std::string(jwt);
  expect_split_word_redacted(value, 30, jwt, "Bearer [REDACTED]", "[REDACTED]");
}

TEST(StreamRedactor, PassesCompleteLinesOnAtOnce) {
  Redacted r;
  r.redactor.feed("plain output\nZq8dF3kP0w is half a secret\n");
  EXPECT_EQ(r.out, "plain output\n[REDACTED] is half a secret\n");
}

TEST(StreamRedactor, HoldsOnlyWhatCouldStillBeginASecret) {
  SecretSet secrets;
  const std::string secret = "two words secret";  // no pieces: it has whitespace
  ASSERT_TRUE(secrets.add(secret));
  std::string out;
  StreamRedactor redactor(&secrets, [&](std::string_view bytes) { out.append(bytes); });
  redactor.feed("x: " + secret.substr(0, secret.size() - 1));
  EXPECT_EQ(out, "x: ");
  redactor.feed("!\n");
  EXPECT_EQ(out, "x: " + secret.substr(0, secret.size() - 1) + "!\n");
}

TEST(StreamRedactor, WithoutSecretsBytesPassStraightOn) {
  std::string out;
  StreamRedactor redactor(nullptr, [&](std::string_view bytes) { out.append(bytes); });
  redactor.feed("partial");
  EXPECT_EQ(out, "partial");
}

// The attack on the agent's io thread: a long sensitive output, then 1 MiB of text that agrees
// with it until it differs, through both layers a Run's log passes. The work is counted
// (SecretSet::work: bytes compared and hashed), not timed; comparing whole strings at every held
// position costs some 10^5 per byte here.
TEST(RedactedLines, CraftedOutputCostsBoundedWorkPerByteThroughBothLayers) {
  constexpr std::uint64_t kBoundPerByte = 4096;
  auto secrets = std::make_shared<SecretSet>();
  ASSERT_TRUE(secrets->add(std::string(32 * 1024, 'A') + " x"));
  const std::string text = std::string(std::size_t{1} << 20, 'A') + "C\n";
  std::vector<std::string> lines;
  LogRedactor log(secrets, [&](std::string_view line) { lines.emplace_back(line); });
  RedactedLines stream(secrets.get(), 64 * 1024, [&](std::string_view line) { log(line); });
  for (std::size_t at = 0; at < text.size(); at += 16 * 1024)
    stream.feed(std::string_view(text).substr(at, 16 * 1024));
  stream.finish();
  log.flush();
  // The "A"s are pieces of the secret: markers, and one line, since markers are shorter.
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].starts_with("[REDACTED]") && lines[0].ends_with("]C"));
  EXPECT_EQ(lines[0].find("AAAAAAAA"), std::string::npos);
  EXPECT_LE(secrets->work(), kBoundPerByte * text.size());
}

TEST(RedactedLines, ASecretAcrossTheLongLineCutIsReplacedWhole) {
  constexpr std::size_t kMaxLine = 64 * 1024;
  SecretSet secrets;
  ASSERT_TRUE(secrets.add(kSecret));
  std::vector<std::string> lines;
  RedactedLines stream(&secrets, kMaxLine, [&](std::string_view line) { lines.emplace_back(line); });
  // The cut falls 9 bytes into the secret; the pipe delivers 16 KiB chunks.
  const std::string text = std::string(kMaxLine - 9, 'x') + std::string(kSecret) +
                           std::string(100, 'y') + "\nend\n";
  for (std::size_t at = 0; at < text.size(); at += 16 * 1024)
    stream.feed(std::string_view(text).substr(at, 16 * 1024));
  stream.finish();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].size(), kMaxLine);
  // (compared as a boolean: a failure message of 64 KiB helps nobody)
  EXPECT_TRUE(lines[0] + lines[1] ==
              std::string(kMaxLine - 9, 'x') + "[REDACTED]" + std::string(100, 'y'))
      << "around the cut: " << lines[0].substr(kMaxLine - 20) << " | " << lines[1].substr(0, 20);
  EXPECT_EQ(lines[2], "end");
  for (const auto& line : lines) EXPECT_TRUE(pieces_in(line).empty()) << pieces_in(line).front();
}

}  // namespace
}  // namespace takosumi::redaction
