// The budget arithmetic and a TempUpload's lifetime, with a real temp file.
#include "controlplane/http/temp_budget.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

TEST(TempBudget, ReservesUpToTheLimitAndNoFurther) {
  TempBudget budget(100);
  EXPECT_TRUE(budget.try_reserve(60));
  EXPECT_FALSE(budget.try_reserve(41));
  EXPECT_EQ(budget.used(), 60u);
  EXPECT_TRUE(budget.try_reserve(40));
  budget.release(100);
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_FALSE(budget.try_reserve(101));
}

TEST(TempUpload, RemovesItsFileAndReturnsItsShare) {
  takosumi::testing::TempDir dir;
  auto shared = std::make_shared<TempBudget>(100);
  TempBudget& budget = *shared;
  {
    TempUpload first(shared, dir.path() / "first");
    std::ofstream(first.path()) << "partial";
    EXPECT_TRUE(first.reserve_total(30));
    EXPECT_TRUE(first.reserve_total(70));  // grows by 40
    EXPECT_TRUE(first.reserve_total(50));  // already covered
    TempUpload second(shared, dir.path() / "second");
    EXPECT_FALSE(second.reserve_total(31));
    EXPECT_TRUE(second.refused());
    EXPECT_EQ(budget.used(), 70u);
  }
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "first"));
}

}  // namespace
}  // namespace takosumi::controlplane
