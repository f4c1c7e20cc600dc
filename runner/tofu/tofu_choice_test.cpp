#include "runner/tofu/tofu_choice.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// The choice alone, from explicit values: a manifest, the module's required_version literals and a
// tofu.versionsDir of stand-in builds (selection reads names only).
class TofuChoiceTest : public ::testing::Test {
 protected:
  void add(const std::string& name) {
    fs::create_directories(dir_ / name);
    std::ofstream(dir_ / name / "tofu") << "#!/bin/sh\n";
    fs::permissions(dir_ / name / "tofu", fs::perms::owner_all);
  }
  TofuChoiceInputs inputs(std::vector<std::string> literals, bool with_dir = true) {
    TofuChoiceInputs in{"/usr/bin/tofu", with_dir ? dir_.path() : fs::path{}, false, {}, false};
    int line = 1;
    for (auto& c : literals) in.required_versions.push_back({"main.tf", "main.tf:" + std::to_string(line++), c});
    return in;
  }
  protocol::JobManifest manifest_;
  TempDir dir_;
};

TEST_F(TofuChoiceTest, WithoutConstraintsTheRunUsesTofuBinary) {
  add("1.10.6");
  auto choice = choose_tofu(manifest_, inputs({}));
  ASSERT_TRUE(choice) << choice.error().to_string();
  EXPECT_EQ(choice->binary, "/usr/bin/tofu");
  EXPECT_TRUE(choice->build.empty());
  EXPECT_TRUE(choice->said.empty());
}

TEST_F(TofuChoiceTest, TheModulesAndTheCapsulesConstraintsChooseTheNewestBuildOfAll) {
  for (const char* v : {"1.8.9", "1.9.1", "1.10.6"}) add(v);
  manifest_.opentofu_version = "< 1.10";
  auto choice = choose_tofu(manifest_, inputs({">= 1.8"}));
  ASSERT_TRUE(choice) << choice.error().to_string();
  EXPECT_EQ(choice->build, "1.9.1");
  EXPECT_EQ(choice->binary, dir_ / "1.9.1" / "tofu");
  ASSERT_EQ(choice->requirements.size(), 2u);
  EXPECT_EQ(choice->requirements[0].where, "the Capsule's opentofuVersion");
  EXPECT_EQ(choice->requirements[1].where, "main.tf:1: required_version");
  EXPECT_NE(choice->said.find("OpenTofu 1.9.1 of tofu.versionsDir"), std::string::npos) << choice->said;
}

TEST_F(TofuChoiceTest, AnApplyRunsThePlansBuildWhateverTheConstraintsSayNow) {
  for (const char* v : {"1.9.1", "1.10.6"}) add(v);
  manifest_.type = protocol::RunType::apply;
  manifest_.saved_plan = protocol::SavedPlanRef{"d", "k", "1.9.1", "1.9.1"};
  auto choice = choose_tofu(manifest_, inputs({">= 1.10"}));
  ASSERT_TRUE(choice) << choice.error().to_string();
  EXPECT_EQ(choice->build, "1.9.1");
  EXPECT_TRUE(choice->requirements.empty());
  auto without = choose_tofu(manifest_, inputs({}, false));
  ASSERT_FALSE(without);
  EXPECT_EQ(without.error().code, "opentofu_version_unavailable");
  EXPECT_NE(without.error().message.find("no tofu.versionsDir"), std::string::npos);
}

TEST_F(TofuChoiceTest, AnUnreadableConstraintFailsOnlyWhereABuildIsToBeChosen) {
  add("1.10.6");
  auto chosen = choose_tofu(manifest_, inputs({"not a version"}));
  ASSERT_FALSE(chosen);
  EXPECT_EQ(chosen.error().code, "opentofu_version_unavailable");
  EXPECT_NE(chosen.error().message.find("main.tf:1: required_version"), std::string::npos);
  auto left_to_tofu = choose_tofu(manifest_, inputs({"not a version"}, false));
  ASSERT_TRUE(left_to_tofu) << "OpenTofu's own check at init reads it";
  EXPECT_TRUE(left_to_tofu->requirements.empty());
  auto cut = inputs({">= 1.0"});
  cut.required_versions_cut = true;
  auto too_many = choose_tofu(manifest_, cut);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("merge them into one"), std::string::npos);
}

TEST_F(TofuChoiceTest, WhatTheBuildSaysItIsIsCheckedToo) {
  add("1.10.6");
  auto choice = choose_tofu(manifest_, inputs({"~> 1.10.0"}));
  ASSERT_TRUE(choice);
  auto same = check_tofu_version(manifest_, *choice, "1.10.6", true);
  ASSERT_TRUE(same);
  EXPECT_TRUE(same->empty());
  auto misnamed = check_tofu_version(manifest_, *choice, "1.10.7", true);
  ASSERT_TRUE(misnamed);
  EXPECT_NE(misnamed->find("name its directory after the version it is"), std::string::npos);
  auto outside = check_tofu_version(manifest_, *choice, "1.11.0", true);
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code, "opentofu_version_unavailable");
  EXPECT_NE(outside.error().message.find("does not satisfy main.tf:1: required_version"),
            std::string::npos)
      << outside.error().message;
  manifest_.type = protocol::RunType::apply;
  manifest_.saved_plan = protocol::SavedPlanRef{"d", "k", "1.10.5", ""};
  auto other_plan = check_tofu_version(manifest_, *choice, "1.10.6", true);
  ASSERT_FALSE(other_plan);
  EXPECT_NE(other_plan.error().message.find("plan again"), std::string::npos);
}

}  // namespace
}  // namespace takosumi::runner
