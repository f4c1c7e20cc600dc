// The data-loss rule of apply as a pure function of the plan Run's stored marks.
#include "controlplane/runs/data_loss.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {
namespace {

Run plan_with(std::optional<std::string> marks) {
  Run run;
  run.id = "run_1";
  run.data_loss_json = std::move(marks);
  return run;
}

TEST(DataLossTest, PlansWithoutMarksNeedNoAcceptance) {
  EXPECT_TRUE(check_data_loss_accepted(plan_with(std::nullopt), false));
  EXPECT_TRUE(check_data_loss_accepted(plan_with("[]"), false));
}

TEST(DataLossTest, MarksAreRefusedUntilAcceptedAndEveryAddressIsNamed) {
  const controlplane::Run plan = plan_with(
      R"([{"address":"aws_db_instance.main","type":"aws_db_instance","action":"replace","reason":"r1"},)"
      R"( {"address":"local_file.data","type":"local_file","action":"delete","reason":"r2"}])");
  auto refused = check_data_loss_accepted(plan, false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kDataLossNotAccepted);
  EXPECT_NE(refused.error().message.find("aws_db_instance.main (replace: r1)"), std::string::npos);
  EXPECT_NE(refused.error().message.find("local_file.data (delete: r2)"), std::string::npos);
  EXPECT_NE(refused.error().message.find("\"acceptDataLoss\": true"), std::string::npos);
  EXPECT_TRUE(check_data_loss_accepted(plan, true));
  EXPECT_EQ(stored_data_loss(plan)->size(), 2u);
}

TEST(DataLossTest, CorruptMarksFailClosed) {
  auto refused = check_data_loss_accepted(plan_with("{not json"), true);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kInternal);
  // An entry that is not a whole mark is refused, never skipped (a skipped mark would let the
  // plan be applied as if it lost nothing).
  for (const char* stored : {R"([1])", R"([{"address":"a.b","type":"t"}])", R"({"a":1})"}) {
    auto bad = check_data_loss_accepted(plan_with(stored), false);
    ASSERT_FALSE(bad) << stored;
    EXPECT_EQ(bad.error().code, errc::kInternal) << stored;
  }
}

}  // namespace
}  // namespace takosumi::controlplane
