// End to end: a plan whose run report is larger than the body of /complete may hold (more than
// protocol::kMaxInlineReportBytes) travels as the Run's `report` artifact, and the plan and its
// apply succeed with every resource change reported.
#include <gtest/gtest.h>

#include "protocol/run_report.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

// 1,100 resources named by a 501-character identifier: about 680 KB of resource changes. (Long
// for_each keys would do too, but OpenTofu plans those a hundred times slower.)
constexpr int kResources = 1100;

std::string large_module() {
  const std::string name = "r" + std::string(500, 'x');
  return "resource \"terraform_data\" \"" + name + "\" {\n"
         "  count = " + std::to_string(kResources) + "\n"
         "  input = count.index\n"
         "}\n"
         "output \"count\" {\n"
         "  value = length(terraform_data." + name + ")\n"
         "}\n";
}

TEST(LargePlan, AReportPastTheInlineLimitTravelsAsAnArtifactAndThePlanAndApplySucceed) {
  Stack stack;
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", large_module()}});
  const auto capsule = stack.create_capsule(
      repo.url(), json::object{},
      json::object{{"resources", json::object{{"from", "count"}, {"type", "number"}}}});
  auto plan = stack.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << str(plan, "status") << stack.agent_logs();
  const auto& changes = plan.at("resourceChanges").as_array();
  ASSERT_EQ(changes.size(), static_cast<std::size_t>(kResources));
  EXPECT_GT(json::serialize(changes).size(), protocol::kMaxInlineReportBytes)
      << "the report must be large enough to travel as an artifact";
  EXPECT_EQ(plan.at("changeSummary").at("add").as_int64(), kResources);

  auto applied = stack.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << str(applied, "status") << stack.agent_logs();
  auto outputs = stack.api().get("/api/v1/capsules/" + capsule + "/outputs");
  ASSERT_EQ(outputs.status, 200u) << outputs.body;
  EXPECT_EQ(outputs.json.at("outputs").at("resources").as_int64(), kResources);
  // The agent left nothing behind: the spool is empty once the control plane acknowledged.
  EXPECT_TRUE(files_containing(stack.agent_dir(0) / "state" / "spool", "terraform_data.rxxx").empty());
}

}  // namespace
}  // namespace takosumi::testing
