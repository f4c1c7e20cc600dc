#include "protocol/version_constraint.hpp"

#include <gtest/gtest.h>

namespace takosumi::protocol {
namespace {

bool holds(std::string_view version, std::string_view constraint) {
  auto v = parse_tofu_version(version);
  auto c = parse_version_constraint(constraint);
  EXPECT_TRUE(v) << version;
  EXPECT_TRUE(c) << constraint;
  return v && c && satisfies(*v, *c);
}

int cmp(std::string_view a, std::string_view b) {
  return compare(*parse_tofu_version(a), *parse_tofu_version(b));
}

TEST(VersionConstraintTest, ComparesSegmentsThenPrereleases) {
  EXPECT_EQ(cmp("1.9", "1.9.0"), 0);
  EXPECT_EQ(cmp("v1.10.0", "1.10.0+build7"), 0);
  EXPECT_LT(cmp("1.9.9", "1.10.0"), 0);
  EXPECT_LT(cmp("1.11.0-beta1", "1.11.0"), 0);
  EXPECT_LT(cmp("1.11.0-alpha", "1.11.0-beta"), 0);
  EXPECT_LT(cmp("1.11.0-rc.2", "1.11.0-rc.10"), 0) << "numeric parts compare as numbers";
  EXPECT_LT(cmp("1.11.0-rc.9", "1.11.0-rc.x"), 0) << "numbers below names";
  EXPECT_LT(cmp("1.11.0-rc", "1.11.0-rc.1"), 0) << "fewer parts first";
  EXPECT_GT(cmp("2.0.0", "1.99.99"), 0);
}

TEST(VersionConstraintTest, ReadsOperatorsWithOrWithoutSpaces) {
  EXPECT_TRUE(holds("1.10.2", ">= 1.9, < 2.0"));
  EXPECT_TRUE(holds("1.10.2", ">=1.9,<2.0"));
  EXPECT_FALSE(holds("2.0.0", ">= 1.9, < 2.0"));
  EXPECT_TRUE(holds("1.10.2", "1.10.2"));
  EXPECT_TRUE(holds("1.10.2", "= 1.10.2"));
  EXPECT_FALSE(holds("1.10.2", "!= 1.10.2"));
  EXPECT_TRUE(holds("1.10.3", "> 1.10.2"));
  EXPECT_TRUE(holds("1.10.2", "<= 1.10.2"));
}

TEST(VersionConstraintTest, PessimisticOperatorAllowsTheLastGivenPartToGrow) {
  EXPECT_TRUE(holds("1.10.9", "~> 1.10.0"));
  EXPECT_FALSE(holds("1.11.0", "~> 1.10.0"));
  EXPECT_TRUE(holds("1.99.0", "~> 1.10"));
  EXPECT_FALSE(holds("2.0.0", "~> 1.10"));
  EXPECT_FALSE(holds("1.9.9", "~> 1.10"));
  EXPECT_TRUE(holds("7.0.0", "~> 1")) << "~> 1 only says >= 1";
}

// As OpenTofu: a prerelease is checked by its release, and a constraint cannot name one.
TEST(VersionConstraintTest, APrereleaseIsCheckedByItsRelease) {
  EXPECT_TRUE(holds("1.11.0-beta1", ">= 1.9"));
  EXPECT_TRUE(holds("1.11.0-beta1", "~> 1.11.0"));
  EXPECT_TRUE(holds("1.11.0-beta1", "1.11.0"));
  EXPECT_FALSE(holds("1.11.0-beta1", "< 1.11.0"));
  for (std::string_view named : {">= 1.11.0-beta1", "1.11.0-beta1", "~> 1.11.0-rc.1"}) {
    auto c = parse_version_constraint(named);
    ASSERT_FALSE(c) << named;
    EXPECT_NE(c.error().message.find("cannot name a prerelease"), std::string::npos)
        << c.error().message;
  }
}

TEST(VersionConstraintTest, SpacesAsGoReadsThemAndNothingUnprintableInMessages) {
  EXPECT_TRUE(holds("1.10.0", ">= 1.0\n"));
  EXPECT_TRUE(holds("1.10.0", "\t>=\r1.0 ,\f< 2"));
  auto c = parse_version_constraint(">= 1.0\u001b[31m\nFAKE LINE");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message.find('\n'), std::string::npos) << c.error().message;
  EXPECT_EQ(c.error().message.find('\x1b'), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("\\x1b[31m\\x0aFAKE LINE"), std::string::npos)
      << c.error().message;
  auto longer = parse_version_constraint(std::string(200, '~'));
  ASSERT_FALSE(longer);
  EXPECT_LT(longer.error().message.size(), 300u) << "the text is cut in the message";
}

TEST(VersionConstraintTest, RefusesWhatIsNotAVersionOrConstraint) {
  for (std::string_view bad : {"", "latest", "1..2", "1.x", ">= ", "=> 1.0", "1.0,", "-1.0",
                               "1.0-", "1.0+", "1.0.0.0.0.0.0.0.0"}) {
    auto c = parse_version_constraint(bad);
    ASSERT_FALSE(c) << bad;
    EXPECT_EQ(c.error().code, "invalid_argument");
    EXPECT_NE(c.error().message.find("is not a version constraint"), std::string::npos) << bad;
  }
  EXPECT_FALSE(parse_version_constraint(std::string(300, '1')));
  EXPECT_FALSE(parse_tofu_version("1.0 beta"));
}

}  // namespace
}  // namespace takosumi::protocol
