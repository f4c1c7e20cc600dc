#include "runner/state/state_document.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "runner/state/state_file.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

using takosumi::testing::TempDir;

constexpr std::string_view kState =
    R"({"version":4,"serial":3,"lineage":"l","outputs":{"pw":{"value":"hunter2-long-enough","type":"string","sensitive":true}},"resources":[]})";

std::filesystem::path write_state(const TempDir& tmp) {
  const auto path = tmp.path() / "terraform.tfstate";
  std::ofstream(path) << kState;
  return path;
}

TEST(StateDocument, ReadsAStateWithinTheLimitAndCollectsItsSecrets) {
  TempDir tmp;
  redaction::SecretSet secrets;
  auto doc = read_state_document(write_state(tmp), "the state", kState.size(), secrets);
  ASSERT_TRUE(doc) << doc.error().to_string();
  EXPECT_TRUE(doc->contains("lineage"));
  EXPECT_TRUE(secrets.contains_secret("hunter2-long-enough"));
}

TEST(StateDocument, RefusesAStateJustPastTheLimit) {
  TempDir tmp;
  redaction::SecretSet secrets;
  auto doc = read_state_document(write_state(tmp), "the state", kState.size() - 1, secrets);
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().code, errc::kPayloadTooLarge);
}

// The limit of every state read comes from limits.maxStateBytes: above the default it is taken as
// it is (a 1 GiB limit reads a 300 MiB state), below it the default still applies so a state over
// the limit can be stored before the Run fails with limit_exceeded.
TEST(StateDocument, TheReadLimitHonoursAConfiguredLimitAboveTheDefault) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  EXPECT_EQ(state_read_limit(kGiB), kGiB);
  EXPECT_EQ(state_read_limit(config::kDefaultMaxStateBytes + 1), config::kDefaultMaxStateBytes + 1);
  EXPECT_EQ(state_read_limit(config::kDefaultMaxStateBytes), config::kDefaultMaxStateBytes);
  EXPECT_EQ(state_read_limit(4096), config::kDefaultMaxStateBytes);
}

TEST(StateDocument, NotJsonIsAnOpentofuFailure) {
  auto v = parse_json_document("{nope", "tofu show -json");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, errc::kOpentofuFailed);
}

}  // namespace
}  // namespace takosumi::runner
