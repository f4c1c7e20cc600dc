#include "runner/state/state_file.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

using takosumi::testing::TempDir;

TEST(StateFile, ReadsSerialAndLineageOfAVersion4State) {
  TempDir tmp;
  const auto path = tmp.path() / "terraform.tfstate";
  std::ofstream(path) << R"({"version":4,"terraform_version":"1.12.6","serial":7,
      "lineage":"8b7afe3e-235e-eed4-eff3-6a0b7ae40f6f","outputs":{},"resources":[],"check_results":null})";
  auto r = read_state_identity(path, config::kDefaultMaxStateBytes);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->serial, 7);
  EXPECT_EQ(r->lineage, "8b7afe3e-235e-eed4-eff3-6a0b7ae40f6f");
  EXPECT_TRUE(r->empty);
}

TEST(StateFile, AStateWithResourcesOrOutputsIsNotEmpty) {
  auto with_resource = parse_state_identity(
      R"({"version":4,"serial":2,"lineage":"l","outputs":{},"resources":[{"type":"local_file"}]})",
      config::kDefaultMaxStateBytes);
  ASSERT_TRUE(with_resource) << with_resource.error().to_string();
  EXPECT_FALSE(with_resource->empty);
  auto with_output = parse_state_identity(
      R"({"version":4,"serial":2,"lineage":"l","outputs":{"o":{"value":1,"type":"number"}}})",
      config::kDefaultMaxStateBytes);
  ASSERT_TRUE(with_output) << with_output.error().to_string();
  EXPECT_FALSE(with_output->empty);
}

TEST(StateFile, RefusesOtherVersionsAndGarbage) {
  for (const char* bad : {R"({"version":3,"serial":1,"lineage":"x"})", R"({"version":4,"lineage":"x"})",
                          R"({"version":4,"serial":1})", "nonsense"}) {
    auto r = parse_state_identity(bad, config::kDefaultMaxStateBytes);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "state_integrity_failed") << bad;
  }
}

TEST(StateFile, MissingFileIsAnError) {
  TempDir tmp;
  EXPECT_FALSE(read_state_identity(tmp.path() / "none", config::kDefaultMaxStateBytes));
}

}  // namespace
}  // namespace takosumi::runner
