// Registration challenges: single use, short-lived, bound to a pool token, bounded in number.
#include "controlplane/api/registration_challenges.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "tests/support/fake_clock.hpp"

using takosumi::testing::FakeClock;

namespace takosumi::controlplane {
namespace {

const std::string kPool(64, 'p');

void expect_refused(const Status& s, std::string_view why) {
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, errc::kRegistrationChallengeInvalid);
  EXPECT_NE(s.error().message.find(why), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("fetch a new one"), std::string::npos) << s.error().message;
}

TEST(RegistrationChallenges, AChallengeServesOnce) {
  FakeClock clock{1000};
  RegistrationChallenges challenges(clock);
  auto issued = challenges.issue(kPool);
  EXPECT_EQ(issued.challenge.size(), 64u);
  EXPECT_EQ(issued.expires_at, 1000 + RegistrationChallenges::kLifetimeSeconds);
  EXPECT_NE(challenges.issue(kPool).challenge, issued.challenge);
  EXPECT_TRUE(challenges.redeem(issued.challenge, kPool));
  expect_refused(challenges.redeem(issued.challenge, kPool), "already used");
  expect_refused(challenges.redeem("never-issued", kPool), "unknown");
}

TEST(RegistrationChallenges, AnExpiredChallengeIsRefused) {
  FakeClock clock{1000};
  RegistrationChallenges challenges(clock);
  auto issued = challenges.issue(kPool);
  clock.advance(RegistrationChallenges::kLifetimeSeconds);
  expect_refused(challenges.redeem(issued.challenge, kPool), "expired");
}

TEST(RegistrationChallenges, AChallengeServesOnlyThePoolTokenThatAskedForIt) {
  FakeClock clock{1000};
  RegistrationChallenges challenges(clock);
  auto issued = challenges.issue(kPool);
  expect_refused(challenges.redeem(issued.challenge, std::string(64, 'q')), "another pool token");
  expect_refused(challenges.redeem(issued.challenge, kPool), "already used");
}

TEST(RegistrationChallenges, OutstandingChallengesAreBounded) {
  FakeClock clock{1000};
  RegistrationChallenges challenges(clock);
  auto oldest = challenges.issue(kPool);
  auto second = challenges.issue(kPool);
  for (std::size_t i = 2; i < RegistrationChallenges::kMaxOutstanding + 10; ++i) challenges.issue(kPool);
  EXPECT_EQ(challenges.outstanding(), RegistrationChallenges::kMaxOutstanding);
  expect_refused(challenges.redeem(oldest.challenge, kPool), "unknown");  // dropped first
  expect_refused(challenges.redeem(second.challenge, kPool), "unknown");
  // Expired ones are forgotten before anything newer is dropped.
  clock.advance(RegistrationChallenges::kLifetimeSeconds);
  auto fresh = challenges.issue(kPool);
  EXPECT_EQ(challenges.outstanding(), 1u);
  EXPECT_TRUE(challenges.redeem(fresh.challenge, kPool));
}

}  // namespace
}  // namespace takosumi::controlplane
