#include "runner/state/plan_contents.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/failure_codes.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string text_of(const fs::path& p) { return read_file(p, 1 << 20).value_or("<unreadable>"); }

class PlanContentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A plan file is a zip archive: it begins "PK\3\4" and may hold any byte.
    plan_ = std::string("PK\3\4") + std::string(1, '\0') + "plan body \xff\n" + std::string(70000, 'p');
    ASSERT_TRUE(write_file_atomic(dir_.path() / "run.tfplan", plan_));
  }

  // The contents of the plan with these values, as bytes.
  std::string contents_with(const std::vector<SecretBytes>& values) {
    const auto out = dir_.path() / "contents";
    EXPECT_TRUE(write_plan_contents(dir_.path() / "run.tfplan", values, out));
    auto text = text_of(out);
    fs::remove(out);
    return text;
  }

  Result<std::optional<std::vector<SecretBytes>>> split(const std::string& contents) {
    const auto in = dir_.path() / "in";
    EXPECT_TRUE(write_file_atomic(in, contents));
    fs::remove(dir_.path() / "out.tfplan");
    auto split = split_plan_contents(in, dir_.path() / "out.tfplan");
    EXPECT_FALSE(fs::exists(in)) << "the scratch contents are removed either way";
    return split;
  }

  TempDir dir_;
  std::string plan_;
};

TEST_F(PlanContentsTest, ThePlanAndItsValuesComeBackExactly) {
  std::vector<SecretBytes> values;
  values.push_back(SecretBytes::from_string("hunter2-is-a-password"));
  values.push_back(SecretBytes::from_string(std::string("with") + '\0' + "nul and \xe2\x9c\x93"));
  values.push_back(SecretBytes::from_string(""));
  auto split = this->split(contents_with(values));
  ASSERT_TRUE(split) << split.error().to_string();
  ASSERT_TRUE(split->has_value());
  ASSERT_EQ((*split)->size(), 3u);
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ((**split)[i].reveal_as_string(), values[i].reveal_as_string()) << i;
  EXPECT_EQ(text_of(dir_.path() / "out.tfplan"), plan_);
}

TEST_F(PlanContentsTest, NoValuesIsAnEmptyListNotAnOlderPlan) {
  auto split = this->split(contents_with({}));
  ASSERT_TRUE(split) << split.error().to_string();
  ASSERT_TRUE(split->has_value());
  EXPECT_TRUE((*split)->empty());
  EXPECT_EQ(text_of(dir_.path() / "out.tfplan"), plan_);
}

// A plan sealed by an agent before plan contents: the bare plan file, applied as it is, and the
// apply asks tofu for the values.
TEST_F(PlanContentsTest, AnOlderAgentsBarePlanFileIsThePlan) {
  auto split = this->split(plan_);
  ASSERT_TRUE(split) << split.error().to_string();
  EXPECT_FALSE(split->has_value());
  EXPECT_EQ(text_of(dir_.path() / "out.tfplan"), plan_);
}

// Values found by code of another revision are not trusted: the plan comes out, and the apply
// asks tofu for the values (nullopt).
TEST_F(PlanContentsTest, ValuesOfAnotherRevisionAreAskedOfTofuAgain) {
  std::vector<SecretBytes> values;
  values.push_back(SecretBytes::from_string("found-by-older-code"));
  std::string contents = contents_with(values);
  ASSERT_EQ(contents.substr(0, 8), std::string("TKSPLAN") + kPlanSecretsRevision);
  contents[7] = static_cast<char>(kPlanSecretsRevision - 1);
  auto split = this->split(contents);
  ASSERT_TRUE(split) << split.error().to_string();
  EXPECT_FALSE(split->has_value());
  EXPECT_EQ(text_of(dir_.path() / "out.tfplan"), plan_);
}

TEST_F(PlanContentsTest, AMalformedLayoutIsAnIntegrityFailure) {
  std::vector<SecretBytes> values;
  values.push_back(SecretBytes::from_string("a-sensitive-value"));
  const std::string good = contents_with(values);
  const std::string cases[] = {
      good.substr(0, 12),                    // cut inside the plan's size
      good.substr(0, 16 + plan_.size() / 2),  // cut inside the plan
      good.substr(0, good.size() - 3),       // cut inside the last value
      good + "x",                            // bytes after the values
      // the plan's size says more than the file holds
      good.substr(0, 8) + "\x7f" + std::string(7, '\0') + good.substr(16),
  };
  for (const auto& contents : cases) {
    auto split = this->split(contents);
    ASSERT_FALSE(split) << contents.size();
    EXPECT_EQ(split.error().code, errc::kStateIntegrityFailed) << split.error().to_string();
  }
  // A count of values no plan has.
  std::string many = good.substr(0, 16 + plan_.size()) + "\xff\xff\xff\xff";
  auto split = this->split(many);
  ASSERT_FALSE(split);
  EXPECT_EQ(split.error().code, errc::kStateIntegrityFailed);
}

}  // namespace
}  // namespace takosumi::runner
