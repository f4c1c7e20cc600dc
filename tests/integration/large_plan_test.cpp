// End to end: a plan whose run report is larger than the JSON body of /complete may hold (1 MiB)
// is streamed as the body of PUT .../report, and the plan and its apply succeed with every
// resource change reported. (Before, such a Run was handed out again and again until lease_lost.)
#include <gtest/gtest.h>

#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

// 1,800 resources named by a 501-character identifier: about 1.1 MB of resource changes, more
// than /complete's body takes. (Long for_each keys would do too, but OpenTofu plans those a
// hundred times slower.)
constexpr int kResources = 1800;

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

TEST(LargePlan, AReportTooLargeForCompletesBodyIsStreamedAndThePlanAndApplySucceed) {
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
  EXPECT_GT(json::serialize(changes).size(), std::size_t{1} << 20)
      << "the report must be too large for the body of /complete";
  EXPECT_EQ(plan.at("changeSummary").at("add").as_int64(), kResources);

  auto applied = stack.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << str(applied, "status") << stack.agent_logs();
  auto outputs = stack.api().get("/api/v1/capsules/" + capsule + "/outputs");
  ASSERT_EQ(outputs.status, 200u) << outputs.body;
  EXPECT_EQ(outputs.json.at("outputs").at("resources").as_int64(), kResources);
  // The agent left nothing behind: the spool is empty once the control plane acknowledged. The
  // Run shows succeeded as soon as the control plane took the report, a moment before the agent
  // has read the acknowledgement and emptied its spool: the agent's exit (SIGTERM lets its Runs
  // finish) is the event after which the spool is final.
  stack.stop_agents();
  EXPECT_TRUE(files_containing(stack.agent_dir(0) / "state" / "spool", "terraform_data.rxxx").empty());
}

}  // namespace
}  // namespace takosumi::testing
