// Apply admission as a pure function of the plan Run and what the stores know about it.
#include "controlplane/runs/apply_admission.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {
namespace {

constexpr const char* kMarks =
    R"([{"address":"local_file.data","type":"local_file","action":"delete","reason":"r"}])";

ApplyCandidate applicable_plan() {
  Run plan;
  plan.id = "run_plan";
  plan.capsule_id = "cap_1";
  plan.type = protocol::RunType::plan;
  plan.status = std::string(run_status::kSucceeded);
  plan.has_changes = true;
  plan.plan_digest = std::string(64, 'e');
  plan.plan_artifact_sha256 = std::string(64, 'd');
  plan.prior_generation = 3;
  return ApplyCandidate{plan, 3, true, false};
}

TEST(ApplyAdmissionTest, ASucceededPlanAgainstTheCurrentGenerationIsAdmitted) {
  auto admitted = admit_apply(applicable_plan(), false);
  ASSERT_TRUE(admitted) << admitted.error().to_string();
  EXPECT_FALSE(admitted->data_loss_accepted);
}

TEST(ApplyAdmissionTest, EachRuleRefusesWithConflict) {
  auto refused_when = [](auto change) {
    ApplyCandidate c = applicable_plan();
    change(c);
    auto admitted = admit_apply(c, true);
    return admitted ? std::string("admitted") : admitted.error().code;
  };
  EXPECT_EQ(refused_when([](auto& c) { c.plan.status = run_status::kFailed; }), errc::kConflict);
  EXPECT_EQ(refused_when([](auto& c) { c.plan.has_changes = false; }), errc::kConflict);
  EXPECT_EQ(refused_when([](auto& c) { c.plan.plan_digest.reset(); }), errc::kConflict);
  EXPECT_EQ(refused_when([](auto& c) { c.plan_artifact_stored = false; }), errc::kConflict);
  EXPECT_EQ(refused_when([](auto& c) { c.apply_exists = true; }), errc::kConflict);
  EXPECT_EQ(refused_when([](auto& c) { c.current_generation = 4; }), errc::kConflict);
  EXPECT_EQ(refused_when([](auto& c) { c.plan.type = protocol::RunType::apply; }), errc::kConflict);
  EXPECT_EQ(refused_when([](auto& c) { c.plan.type = protocol::RunType::drift_check; }),
            errc::kConflict);
  EXPECT_EQ(refused_when([](auto& c) { c.plan.type = protocol::RunType::destroy_plan; }),
            "admitted");
}

TEST(ApplyAdmissionTest, DataLossMarksNeedAcceptanceAndTheApplyRecordsIt) {
  ApplyCandidate c = applicable_plan();
  c.plan.data_loss_json = kMarks;
  auto refused = admit_apply(c, false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kDataLossNotAccepted);
  auto accepted = admit_apply(c, true);
  ASSERT_TRUE(accepted) << accepted.error().to_string();
  EXPECT_TRUE(accepted->data_loss_accepted);
}

TEST(ApplyAdmissionTest, AcceptingWithoutMarksRecordsNoAcceptance) {
  auto admitted = admit_apply(applicable_plan(), true);
  ASSERT_TRUE(admitted);
  EXPECT_FALSE(admitted->data_loss_accepted);
}

TEST(ApplyAdmissionTest, TheOtherRulesComeBeforeDataLoss) {
  ApplyCandidate c = applicable_plan();
  c.plan.data_loss_json = kMarks;
  c.current_generation = 4;
  auto refused = admit_apply(c, false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kConflict);
}

}  // namespace
}  // namespace takosumi::controlplane
