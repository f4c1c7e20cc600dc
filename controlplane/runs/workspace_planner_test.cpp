// Workspace plans over the real queue and SQLite: a consumer's plan is created only once its
// producer's plan was applied; a plan another apply left behind is superseded and blocks its
// consumers; a finished workspace plan is not looked at again.
#include <gtest/gtest.h>

#include "controlplane/runs/workspace_planner.hpp"
#include "controlplane/testing/run_queue_fixture.hpp"

namespace takosumi::controlplane {
namespace {

class WorkspacePlannerTest : public RunQueueTest {
 protected:
  WorkspacePlannerTest() {
    network_ = capsule("network");
    app_ = capsule("app");
    auto d = dependencies_.create(app_, network_,
                                  {{"vpc_id", protocol::OutputMapping{"vpcId", "any", true}}});
    EXPECT_TRUE(d) << d.error().to_string();
    auto plan = workspace_plans_.create(WorkspacePlan{
        .workspace_id = workspace_id_, .created_by = "token:tok_1",
        .steps = {{.capsule_id = network_.id, .source_commit = std::string(40, 'a')},
                  {.capsule_id = app_.id, .source_commit = std::string(40, 'b'),
                   .producers = {network_.id}}}});
    EXPECT_TRUE(plan) << plan.error().to_string();
    plan_id_ = plan->id;
  }

  std::vector<std::string_view> states() {
    auto plan = workspace_plans_.get(plan_id_);
    EXPECT_TRUE(plan) << plan.error().to_string();
    auto progress = plan_progress(stores(), *plan);
    EXPECT_TRUE(progress) << progress.error().to_string();
    std::vector<std::string_view> out;
    for (const auto& p : *progress) out.push_back(p.state);
    return out;
  }
  int advance() {
    auto created = planner_.advance(workspace_id_);
    EXPECT_TRUE(created) << created.error().to_string();
    return created ? *created : -1;
  }

  WorkspacePlanner planner_{stores()};
  Capsule network_, app_;
  std::string plan_id_;
};

TEST_F(WorkspacePlannerTest, TheConsumerIsPlannedOnlyAfterItsProducerApplied) {
  EXPECT_EQ(advance(), 1);
  EXPECT_EQ(states(), (std::vector<std::string_view>{"planning", "waiting"}));
  const Run network_plan = complete_next_plan();
  EXPECT_EQ(network_plan.capsule_id, network_.id);
  EXPECT_EQ(advance(), 0) << "planned before the producer applied";
  EXPECT_EQ(states(), (std::vector<std::string_view>{"awaiting_apply", "waiting"}));

  ASSERT_TRUE(create_apply(network_plan));
  ASSERT_TRUE(finish_apply(claim_one(agent_a_), 0));
  EXPECT_EQ(advance(), 1);
  EXPECT_EQ(states(), (std::vector<std::string_view>{"done", "planning"}));
  auto app_plan = runs_.get_run(*workspace_plans_.get(plan_id_)->steps[1].plan_run_id);
  ASSERT_TRUE(app_plan);
  EXPECT_EQ(app_plan->source_commit, std::string(40, 'b')) << "the commit resolved at the request";
  auto audit = audit_.list(workspace_id_, 10, std::nullopt);
  ASSERT_TRUE(audit);
  EXPECT_EQ(audit->front().actor, "token:tok_1");
  EXPECT_EQ(audit->front().detail.at("workspacePlanId"), plan_id_.c_str());
}

TEST_F(WorkspacePlannerTest, APlanAnotherApplyLeftBehindIsSupersededAndBlocksItsConsumers) {
  EXPECT_EQ(advance(), 1);
  complete_next_plan();
  plan(network_);
  apply_next_plan(network_);  // another plan of the producer is applied first
  EXPECT_EQ(states(), (std::vector<std::string_view>{"superseded", "blocked"}));
  EXPECT_EQ(advance(), 0);
  auto unfinished = workspace_plans_.list_unfinished(workspace_id_);
  ASSERT_TRUE(unfinished);
  EXPECT_TRUE(unfinished->empty()) << "a failed workspace plan is finished";
}

TEST_F(WorkspacePlannerTest, ADestroyedCapsuleIsSkipped) {
  ASSERT_TRUE(catalog_.set_destroyed(network_.id, clock_.now_unix()));
  EXPECT_EQ(advance(), 0);
  EXPECT_EQ(states(), (std::vector<std::string_view>{"skipped", "blocked"}));
}

}  // namespace
}  // namespace takosumi::controlplane
