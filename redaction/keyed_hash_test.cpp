#include "redaction/keyed_hash.hpp"

#include <gtest/gtest.h>

#include <string>

namespace takosumi::redaction {
namespace {

TEST(KeyedHash, ASubstringMatchesTheDigestOfEqualTextOnly) {
  const KeyedHash hash;
  const std::string secret(300, 'A');
  const auto digest = hash.digest(secret + "B");
  const std::string text = "xx" + secret + "B" + secret + "C";
  const TextHashes hashes(hash, text);
  EXPECT_TRUE(hashes.equals(2, secret.size() + 1, digest));
  EXPECT_FALSE(hashes.equals(secret.size() + 3, secret.size() + 1, digest));  // ends in "C"
  EXPECT_FALSE(hashes.equals(1, secret.size() + 1, digest));
  EXPECT_FALSE(hashes.equals(2, secret.size(), digest));
}

TEST(KeyedHash, EveryInstanceDrawsItsOwnBase) {
  // A module that learnt one Run's hashes learns nothing about another's.
  EXPECT_NE(KeyedHash().digest("same text").hash, KeyedHash().digest("same text").hash);
}

TEST(KeyedHash, ArithmeticStaysBelowThePrime) {
  constexpr std::uint64_t kPrime = (std::uint64_t{1} << 61) - 1;
  EXPECT_EQ(KeyedHash::multiply(kPrime - 1, kPrime - 1), 1u);  // (-1)·(-1)
  EXPECT_EQ(KeyedHash::multiply(kPrime - 1, 2), kPrime - 2);
  EXPECT_EQ(KeyedHash::subtract(0, 1), kPrime - 1);
  EXPECT_EQ(KeyedHash::subtract(5, 5), 0u);
}

}  // namespace
}  // namespace takosumi::redaction
