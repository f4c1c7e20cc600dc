// ModuleScan::required_versions: what chooses a build of tofu.versionsDir.
#include <gtest/gtest.h>

#include <fstream>

#include "runner/policy/module_policy.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

class RequiredVersionScan : public ::testing::Test {
 protected:
  void file(const std::string& name, std::string_view text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  std::vector<std::string> found() {
    auto scan = scan_module(dir_.path());
    EXPECT_TRUE(scan) << scan.error().to_string();
    std::vector<std::string> out;
    if (scan)
      for (const auto& r : scan->required_versions) out.push_back(r.where + " " + r.constraint);
    return out;
  }
  TempDir dir_;
};

TEST_F(RequiredVersionScan, ReadsEveryTerraformBlockOfTheWorkingDirectoryInBothSyntaxes) {
  file("main.tf", "terraform {\n  required_version = \">= 1.6\"\n}\n");
  file("versions.tf", "# comment\nterraform {\n  required_version = \"< 2.0\" # why\n}\n");
  file("extra.tf.json", R"({"terraform": [{"required_version": "~> 1.10"}]})");
  EXPECT_EQ(found(), (std::vector<std::string>{"extra.tf.json:1 ~> 1.10", "main.tf:2 >= 1.6",
                                               "versions.tf:3 < 2.0"}));
}

TEST_F(RequiredVersionScan, IgnoresOtherDirectoriesAndWhatIsNotALiteral) {
  file("main.tf", "module \"m\" {\n  source = \"./modules/m\"\n}\n");
  // A called module's constraint is tofu's own check at init; an example folder is not loaded.
  file("modules/m/main.tf", "terraform {\n  required_version = \"~> 0.12\"\n}\n");
  file("examples/old/main.tf", "terraform {\n  required_version = \"~> 0.11\"\n}\n");
  file("v.tf", "terraform {\n  required_version = \"${var.v}\"\n}\n");
  EXPECT_TRUE(found().empty());
}

TEST_F(RequiredVersionScan, ATofuFileReplacesTheTfFileOfTheSameName) {
  file("main.tf", "terraform {\n  required_version = \"~> 0.15\"\n}\n");
  file("main.tofu", "terraform {\n  required_version = \">= 1.8\"\n}\n");
  file("x.tf.json", R"({"terraform": {"required_version": "~> 0.14"}})");
  file("x.tofu.json", R"({"terraform": {"required_version": ">= 1.9"}})");
  file("other.tf", "terraform {\n  required_version = \"!= 1.7.0\"\n}\n");
  EXPECT_EQ(found(), (std::vector<std::string>{"main.tofu:2 >= 1.8", "other.tf:2 != 1.7.0",
                                               "x.tofu.json:1 >= 1.9"}));
}

TEST_F(RequiredVersionScan, TheLastOverrideFileSettingOneReplacesTheRest) {
  file("main.tf", "terraform {\n  required_version = \"~> 0.15\"\n}\n");
  file("a_override.tf", "terraform {\n  required_version = \">= 1.0\"\n}\n");
  file("override.tf", "terraform {\n  required_version = \">= 1.6\"\n}\n");
  file("z_override.tf", "terraform {\n  backend \"local\" {}\n}\n");
  EXPECT_EQ(found(), (std::vector<std::string>{"override.tf:2 >= 1.6"}));
}

// A module written for both tools repeats its constraint in versions.tf and versions.tofu: the
// repeat is not dropped in favour of the file the merge then drops.
TEST_F(RequiredVersionScan, TheSameConstraintInAReplacedFileAndItsReplacementStays) {
  file("versions.tf", "terraform {\n  required_version = \">= 1.8\"\n}\n");
  file("versions.tofu", "terraform {\n  required_version = \">= 1.8\"\n}\n");
  EXPECT_EQ(found(), (std::vector<std::string>{"versions.tofu:2 >= 1.8"}));
}

// The agent writes takosumi_override.tofu before every command, which replaces a module's own
// takosumi_override.tf.
TEST_F(RequiredVersionScan, AModulesTakosumiOverrideTfIsReplacedByTheAgents) {
  file("main.tf", "terraform {\n  required_version = \">= 1.6\"\n}\n");
  file("takosumi_override.tf", "terraform {\n  required_version = \"~> 1.2.0\"\n}\n");
  EXPECT_EQ(found(), (std::vector<std::string>{"main.tf:2 >= 1.6"}));
}

TEST_F(RequiredVersionScan, AnOverrideCountsEvenPastTheCapOfPrimaryConstraints) {
  std::string distinct;
  for (int i = 0; i < 40; ++i)
    distinct += "terraform {\n  required_version = \">= 1." + std::to_string(i) + "\"\n}\n";
  file("distinct.tf", distinct);
  file("override.tf", "terraform {\n  required_version = \">= 1.6\"\n}\n");
  auto scan = scan_module(dir_.path());
  ASSERT_TRUE(scan);
  ASSERT_EQ(scan->required_versions.size(), 1u);
  EXPECT_EQ(scan->required_versions[0].constraint, ">= 1.6");
  EXPECT_FALSE(scan->required_versions_cut) << "what OpenTofu reads is all there";
}

TEST_F(RequiredVersionScan, RepeatsAreKeptOnceAndTheCountIsBounded) {
  std::string many;
  for (int i = 0; i < 40; ++i) many += "terraform {\n  required_version = \">= 1.0\"\n}\n";
  file("same.tf", many);
  EXPECT_EQ(found().size(), 1u);
  std::string distinct;
  for (int i = 0; i < 40; ++i)
    distinct += "terraform {\n  required_version = \">= 1." + std::to_string(i) + "\"\n}\n";
  file("distinct.tf", distinct);
  auto scan = scan_module(dir_.path());
  ASSERT_TRUE(scan);
  EXPECT_EQ(scan->required_versions.size(), ModuleScan::kMaxRequiredVersions);
  EXPECT_TRUE(scan->required_versions_cut);
}

}  // namespace
}  // namespace takosumi::runner
