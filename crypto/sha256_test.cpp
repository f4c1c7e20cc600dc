#include "crypto/sha256.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "crypto/crypto_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::crypto {
namespace {

using takosumi::testing::TempDir;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, StreamingInPiecesEqualsOneShot) {
  const std::string data = test_support::pattern_bytes(100'003);
  Sha256 h;
  for (std::size_t at = 0; at < data.size(); at += 7919) h.update(data.substr(at, 7919));
  EXPECT_EQ(h.final_hex(), sha256_hex(data));
}

TEST(Sha256, FileLargerThanTheReadBuffer) {
  TempDir dir;
  test_support::write_bytes(dir / "a", std::string(1'000'000, 'a'));  // FIPS 180-2 vector
  auto hex = sha256_file_hex(dir / "a");
  ASSERT_TRUE(hex) << hex.error().to_string();
  EXPECT_EQ(*hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, MissingFileIsNotFound) {
  TempDir dir;
  auto hex = sha256_file_hex(dir / "missing");
  ASSERT_FALSE(hex);
  EXPECT_EQ(hex.error().code, errc::kNotFound);
  EXPECT_NE(hex.error().message.find("missing"), std::string::npos);
}

}  // namespace
}  // namespace takosumi::crypto
