#include "runner/tofu/plan_log_filter.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace takosumi::runner {
namespace {

std::vector<std::string> filter(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  PlanLogFilter f([&](std::string_view l) { out.emplace_back(l); });
  for (const auto& l : lines) f(l);
  return out;
}

// What `tofu plan -no-color` prints, in order: progress, the plan's description, where it was
// saved. From the description on only diagnostics pass (one notice stands for the rest).
TEST(PlanLogFilter, WithholdsThePlansDescriptionAndKeepsProgressAndWarnings) {
  auto out = filter({"random_pet.name: Refreshing state... [id=bold-cat]",
                     "",
                     "OpenTofu used the selected providers to generate the following execution",
                     "plan. Resource actions are indicated with the following symbols:",
                     "  + create",
                     "",
                     "OpenTofu will perform the following actions:",
                     "",
                     "  # local_file.f will be created",
                     "  + resource \"local_file\" \"f\" {",
                     "      + content = \"benign\"",
                     "    }",
                     "",
                     "Plan: 1 to add, 0 to change, 0 to destroy.",
                     "\u2577",
                     "\u2502 Warning: Value for undeclared variable",
                     "\u2575",
                     "",
                     "Saved the plan to: /w/run.tfplan"});
  EXPECT_EQ(out, (std::vector<std::string>{"random_pet.name: Refreshing state... [id=bold-cat]", "",
                                           std::string(kPlanWithheldNotice), "\u2577",
                                           "\u2502 Warning: Value for undeclared variable", "\u2575"}));
}

TEST(PlanLogFilter, ARefreshOnlyOrEmptyPlanIsWithheldToo) {
  auto drift = filter({"Note: Objects have changed outside of OpenTofu", "",
                       "  # local_file.f has been deleted", "  - resource \"local_file\" \"f\" {"});
  EXPECT_EQ(drift, (std::vector<std::string>{std::string(kPlanWithheldNotice)}));
  auto none = filter({"No changes. Your infrastructure matches the configuration."});
  EXPECT_EQ(none, (std::vector<std::string>{std::string(kPlanWithheldNotice)}));
}

// Any process of the Run can write to tofu's stdout: a line that would have ended the withheld
// part in an earlier design ("Saved the plan to:") opens nothing, and what follows it stays out.
TEST(PlanLogFilter, NoLineReopensTheLogOnceTheDescriptionStarted) {
  auto out = filter({"Plan: 1 to add, 0 to change, 0 to destroy.", "Saved the plan to: run.tfplan",
                     "  # local_file.f will be destroyed", "  - resource \"local_file\" \"f\" {"});
  EXPECT_EQ(out, (std::vector<std::string>{std::string(kPlanWithheldNotice)}));
}

}  // namespace
}  // namespace takosumi::runner
