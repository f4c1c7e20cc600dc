#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>

#include "common/clock.hpp"
#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_fields.hpp"
#include "common/secret_bytes.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi {
namespace {

TEST(SecretBytes, NeverPrintsItsValue) {
  auto s = SecretBytes::from_string("hunter2-canary");
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "[redacted]");
  EXPECT_EQ(s.reveal_as_string(), "hunter2-canary");
}

TEST(SecretBytes, MoveLeavesSourceEmpty) {
  auto a = SecretBytes::from_string("abc");
  SecretBytes b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the contract under test
  EXPECT_EQ(b.size(), 3u);
}

TEST(Encoding, Base64RoundTripsAndRejectsGarbage) {
  std::string text = "takosumi\x01\x02";
  auto enc = base64_encode(text);
  auto dec = base64_decode(enc);
  ASSERT_TRUE(dec);
  EXPECT_EQ(std::string(dec->begin(), dec->end()), text);
  auto bad = base64_decode("not base64!!");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, errc::kInvalidArgument);
}

TEST(Encoding, HexIsLowercase) {
  std::uint8_t b[] = {0xAB, 0x01};
  EXPECT_EQ(hex_encode(b), "ab01");
}

TEST(Encoding, Sha256HexIsExactly64LowercaseDigits) {
  const std::string digest(64, 'a');
  EXPECT_TRUE(is_sha256_hex(digest));
  EXPECT_TRUE(is_lower_hex("0123456789abcdef", 16));
  EXPECT_FALSE(is_sha256_hex(digest.substr(1)));
  EXPECT_FALSE(is_sha256_hex(digest + "a"));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'A')));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a') + "g"));
  EXPECT_FALSE(is_lower_hex("", 40));
}

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(ensure_directory(dir_)); }
  takosumi::testing::TempDir tmp_{"takosumi-fileio-"};
  std::filesystem::path dir_ = tmp_.path() / "files";
};

TEST_F(FileIoTest, AtomicWriteCreatesPrivateFileAndReadsBack) {
  auto p = dir_ / "f";
  ASSERT_TRUE(write_file_atomic(p, "hello"));
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto r = read_file(p, 100);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "hello");
}

TEST_F(FileIoTest, ReadRefusesOversizedFileAndNamesMissingOne) {
  auto p = dir_ / "big";
  ASSERT_TRUE(write_file_atomic(p, std::string(200, 'x')));
  auto r = read_file(p, 100);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kPayloadTooLarge);
  auto missing = read_file(dir_ / "nope", 100);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, errc::kNotFound);
  EXPECT_NE(missing.error().message.find("nope"), std::string::npos);
}

TEST(Clock, Rfc3339IsWrittenInUtcAndReadWithFractionsAndOffsets) {
  EXPECT_EQ(utc_timestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_timestamp(1796648645), "2026-12-07T13:04:05Z");
  EXPECT_EQ(parse_utc_timestamp("2026-12-07T13:04:05Z"), 1796648645);
  EXPECT_EQ(parse_utc_timestamp("2026-12-07T13:04:05.999Z"), 1796648645);
  EXPECT_EQ(parse_utc_timestamp("2026-12-07T22:04:05+09:00"), 1796648645);
  EXPECT_EQ(parse_utc_timestamp("2026-12-07T08:04:05-05:00"), 1796648645);
  for (const char* bad : {"", "2026-12-07", "2026-12-07 13:04:05Z", "2026-12-07T13:04:05",
                          "2026-02-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-07T13:04:05Zx",
                          "2026-12-07T13:04:05.Z", "2026-12-07T25:04:05Z", "1796648645",
                          "2026-12-07T13:04:60Z"})
    EXPECT_FALSE(parse_utc_timestamp(bad)) << bad;
  EXPECT_EQ(parse_utc_timestamp("2016-12-31T23:59:60Z"), parse_utc_timestamp("2016-12-31T23:59:59Z"));
  // Only the years RFC 3339 can write: written clamped, read (as epoch seconds) refused beyond.
  EXPECT_EQ(utc_timestamp(kMaxUnixTime + 1000), "9999-12-31T23:59:59Z");
  EXPECT_EQ(utc_timestamp(kMinUnixTime - 1), "0000-01-01T00:00:00Z");
  const boost::json::object far{{"at", std::int64_t{1000000000000}}}, near{{"at", 1796648645}};
  EXPECT_FALSE(get_optional_time(far, "at"));
  ASSERT_TRUE(get_optional_time(near, "at"));
  EXPECT_EQ(**get_optional_time(near, "at"), 1796648645);
}

TEST(Error, ContextIsPrefixedAndCodeKept) {
  Result<int> r = fail(errc::kIoError, "disk full");
  auto r2 = with_context(r, "write state");
  EXPECT_EQ(r2.error().code, errc::kIoError);
  EXPECT_EQ(r2.error().message, "write state: disk full");
}

}  // namespace
}  // namespace takosumi
