#include "runner/tofu/output_log_filter.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace takosumi::runner {
namespace {

std::vector<std::string> filter(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  OutputLogFilter f([&](std::string_view l) { out.emplace_back(l); });
  for (const auto& l : lines) f(l);
  return out;
}

TEST(OutputLogFilter, WithholdsPlanOutputChangesAndKeepsWhatFollows) {
  auto out = filter({"Plan: 1 to add, 0 to change, 0 to destroy.", "", "Changes to Outputs:",
                     "  + internal_id = \"abc\"", "  + greeting    = \"hello\"", "",
                     "Saved the plan to: run.tfplan"});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], "Plan: 1 to add, 0 to change, 0 to destroy.");
  EXPECT_NE(out[2].find("withheld"), std::string::npos);
  EXPECT_EQ(out[3], "Saved the plan to: run.tfplan");
}

TEST(OutputLogFilter, WithholdsEverythingAfterApplyOutputs) {
  auto out = filter({"Apply complete! Resources: 1 added, 0 changed, 0 destroyed.", "",
                     "Outputs:", "", "internal_id = \"abc\"", "tags = {", "  \"a\" = \"b\"", "}"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NE(out[2].find("withheld"), std::string::npos);
  for (const auto& l : out) EXPECT_EQ(l.find("abc"), std::string::npos);
}

TEST(OutputLogFilter, PassesOrdinaryOutputThrough) {
  auto out = filter({"local_file.config: Creating...", "Outputs are documented elsewhere"});
  EXPECT_EQ(out.size(), 2u);
}

}  // namespace
}  // namespace takosumi::runner
