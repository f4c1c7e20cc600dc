#include "runner/tofu/tofu_builds.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

class TofuBuildsTest : public ::testing::Test {
 protected:
  // Selection reads names only: any executable file stands in for a build here. The integration
  // test (tests/integration/tofu_versions_test.cpp) runs real OpenTofu builds.
  void add(const std::string& name, bool executable = true) {
    fs::create_directories(dir_ / name);
    std::ofstream(dir_ / name / "tofu") << "#!/bin/sh\n";
    fs::permissions(dir_ / name / "tofu",
                    executable ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write);
  }

  std::vector<VersionRequirement> require(std::initializer_list<std::string_view> constraints) {
    std::vector<VersionRequirement> out;
    for (auto c : constraints)
      out.push_back({"main.tf:2: required_version", *protocol::parse_version_constraint(c)});
    return out;
  }

  Result<TofuBuild> pick(std::initializer_list<std::string_view> constraints) {
    auto list = list_tofu_builds(dir_.path());
    if (!list) return std::unexpected(list.error());
    return select_tofu_build(*list, require(constraints));
  }

  TempDir dir_;
};

TEST_F(TofuBuildsTest, PicksTheNewestBuildSatisfyingEveryConstraint) {
  for (const char* v : {"1.8.9", "1.9.1", "1.10.6", "1.11.0-beta1"}) add(v);
  EXPECT_EQ(pick({">= 1.8"})->name, "1.11.0-beta1") << "checked by its release, as OpenTofu does";
  EXPECT_EQ(pick({">= 1.8", "< 1.11"})->name, "1.10.6");
  EXPECT_EQ(pick({">= 1.8", "< 1.10"})->name, "1.9.1");
  EXPECT_EQ(pick({"~> 1.8.0"})->name, "1.8.9");
  add("1.11.0");
  EXPECT_EQ(pick({"~> 1.11.0"})->name, "1.11.0") << "a release is newer than its prereleases";
  const auto picked = pick({"~> 1.9.0"});
  ASSERT_TRUE(picked);
  EXPECT_EQ(picked->binary, dir_ / "1.9.1" / "tofu");
}

TEST_F(TofuBuildsTest, NoneSatisfyingNamesTheConstraintsAndWhatIsThere) {
  add("1.9.1");
  add("1.10.6");
  auto none = pick({">= 1.8", "~> 2.0"});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "opentofu_version_unavailable");
  EXPECT_NE(none.error().message.find("\"~> 2.0\""), std::string::npos) << none.error().message;
  EXPECT_NE(none.error().message.find("main.tf:2: required_version"), std::string::npos);
  EXPECT_NE(none.error().message.find("it has 1.10.6, 1.9.1"), std::string::npos)
      << none.error().message;
  EXPECT_EQ(none.error().message.find(dir_.path().string()), std::string::npos)
      << "no agent path in what the control plane shows";
}

TEST_F(TofuBuildsTest, ManyConstraintsOrBuildsMakeNoLongMessage) {
  for (int minor = 0; minor < 40; ++minor) add("1." + std::to_string(minor) + ".0");
  std::vector<VersionRequirement> many;
  for (int i = 0; i < 200; ++i)
    many.push_back({"main.tf:" + std::to_string(i) + ": required_version",
                    *protocol::parse_version_constraint("~> 9." + std::to_string(i) + ".0")});
  auto list = list_tofu_builds(dir_.path());
  ASSERT_TRUE(list);
  auto none = select_tofu_build(*list, many);
  ASSERT_FALSE(none);
  EXPECT_LT(none.error().message.size(), 1024u) << none.error().message;
  EXPECT_NE(none.error().message.find("(and 196 more)"), std::string::npos) << none.error().message;
  EXPECT_NE(none.error().message.find("1.39.0, 1.38.0"), std::string::npos);
  EXPECT_NE(none.error().message.find("(and 24 more)"), std::string::npos) << none.error().message;
}

TEST_F(TofuBuildsTest, SkipsWhatIsNotABuildAndSaysWhy) {
  add("1.10.6");
  add("latest");
  add("bad\nname");
  add("1.9.1", /*executable=*/false);
  fs::create_directories(dir_ / "1.8.0");
  auto list = list_tofu_builds(dir_.path());
  ASSERT_TRUE(list);
  ASSERT_EQ(list->builds.size(), 1u);
  EXPECT_EQ(list->builds[0].name, "1.10.6");
  EXPECT_EQ(list->skipped.size(), 4u);
  for (const auto& why : list->skipped) EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  auto none = pick({"~> 1.9.0"});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("it has 1.10.6 "), std::string::npos) << none.error().message;
}

TEST_F(TofuBuildsTest, AnEmptyOrMissingDirectory) {
  auto none = pick({">= 1.0"});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("it has none"), std::string::npos);
  auto missing = list_tofu_builds(dir_ / "absent");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "io_error");
}

}  // namespace
}  // namespace takosumi::runner
