// Registration challenges: single use, short-lived, bound to a pool token, bounded in number.
#include "controlplane/store/registration_challenges.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "controlplane/testing/test_support.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

using takosumi::testing::FakeClock;

namespace takosumi::controlplane {
namespace {

const std::string kPool(64, 'p');

class RegistrationChallengesTest : public ::testing::Test {
 protected:
  takosumi::testing::TempDir dir_;
  Database db_ = takosumi::testing::open_test_db(dir_.path() / "control.db");
  FakeClock clock{1000};
  RegistrationChallenges challenges{db_, clock};
};

void expect_refused(const Status& s, std::string_view why) {
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, errc::kRegistrationChallengeInvalid);
  EXPECT_NE(s.error().message.find(why), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("fetch a new one"), std::string::npos) << s.error().message;
}

TEST_F(RegistrationChallengesTest, AChallengeServesOnce) {
  auto issued = *challenges.issue(kPool);
  EXPECT_EQ(issued.challenge.size(), 64u);
  EXPECT_EQ(issued.expires_at, 1000 + RegistrationChallenges::kLifetimeSeconds);
  EXPECT_NE(challenges.issue(kPool)->challenge, issued.challenge);
  EXPECT_TRUE(challenges.redeem(issued.challenge, kPool));
  expect_refused(challenges.redeem(issued.challenge, kPool), "already used");
  expect_refused(challenges.redeem("never-issued", kPool), "unknown");
}

TEST_F(RegistrationChallengesTest, AnExpiredChallengeIsRefused) {
  auto issued = *challenges.issue(kPool);
  clock.advance(RegistrationChallenges::kLifetimeSeconds);
  expect_refused(challenges.redeem(issued.challenge, kPool), "expired");
}

TEST_F(RegistrationChallengesTest, AChallengeServesOnlyThePoolTokenThatAskedForIt) {
  auto issued = *challenges.issue(kPool);
  expect_refused(challenges.redeem(issued.challenge, std::string(64, 'q')), "another pool token");
  expect_refused(challenges.redeem(issued.challenge, kPool), "already used");
}

TEST_F(RegistrationChallengesTest, OutstandingChallengesAreBounded) {
  auto oldest = *challenges.issue(kPool);
  auto second = *challenges.issue(kPool);
  for (std::int64_t i = 2; i < RegistrationChallenges::kMaxOutstanding + 10; ++i)
    ASSERT_TRUE(challenges.issue(kPool));
  EXPECT_EQ(*challenges.outstanding(), RegistrationChallenges::kMaxOutstanding);
  expect_refused(challenges.redeem(oldest.challenge, kPool), "unknown");  // dropped first
  expect_refused(challenges.redeem(second.challenge, kPool), "unknown");
  // Expired ones are forgotten before anything newer is dropped.
  clock.advance(RegistrationChallenges::kLifetimeSeconds);
  auto fresh = *challenges.issue(kPool);
  EXPECT_EQ(*challenges.outstanding(), 1);
  EXPECT_TRUE(challenges.redeem(fresh.challenge, kPool));
}

// What one replica issued, another redeems, once: they share the store.
TEST_F(RegistrationChallengesTest, AnotherReplicaRedeemsWhatOneIssuedOnce) {
  RegistrationChallenges other{db_, clock};
  auto issued = *challenges.issue(kPool);
  EXPECT_TRUE(other.redeem(issued.challenge, kPool));
  expect_refused(challenges.redeem(issued.challenge, kPool), "already used");
  // Only its digest is kept: reading the store gives nobody a challenge to redeem.
  EXPECT_EQ(*db_.single_integer("SELECT count(*) FROM registration_challenges"), 0);
  auto kept = *challenges.issue(kPool);
  EXPECT_EQ(*db_.single_integer(
                "SELECT count(*) FROM registration_challenges WHERE challenge_sha256 = ?",
                kept.challenge),
            0);
}

}  // namespace
}  // namespace takosumi::controlplane
