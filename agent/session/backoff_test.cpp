#include "agent/session/backoff.hpp"

#include <gtest/gtest.h>

namespace takosumi::agent {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DoublesFromHalfASecondWithEqualJitter) {
  EXPECT_EQ(backoff_delay(0, 0.0), milliseconds(250));
  EXPECT_EQ(backoff_delay(0, 0.999), milliseconds(499));
  EXPECT_EQ(backoff_delay(1, 0.0), milliseconds(500));
  EXPECT_EQ(backoff_delay(2, 0.0), milliseconds(1000));
}

TEST(Backoff, IsCappedAtThirtySeconds) {
  EXPECT_EQ(backoff_delay(10, 0.0), milliseconds(15000));
  EXPECT_EQ(backoff_delay(1000, 0.0), milliseconds(15000));
  EXPECT_LT(backoff_delay(1000, 0.999), milliseconds(30000));
}

}  // namespace
}  // namespace takosumi::agent
