// The agent refuses manifests it cannot trust before anything runs.
#include <gtest/gtest.h>

#include "crypto/keys.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

void expect_refused(Stack& stack, const std::string& expected_code) {
  const auto out = stack.root() / "real-world";
  std::filesystem::create_directories(out);
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", example_module("hello")}});
  auto capsule = stack.create_capsule(repo.url(), json::object{{"out_dir", out.string()}}, {});
  auto run = stack.plan(capsule);
  EXPECT_EQ(json::value_to<std::string>(run.at("status")), "failed");
  EXPECT_EQ(failure_code(run), expected_code) << json::serialize(run);
  // Nothing ran: the source was never fetched, no workspace was made.
  const auto agent = stack.root() / "agent-0";
  for (const auto& dir : {agent / "state/git-cache", agent / "work"})
    EXPECT_TRUE(!std::filesystem::exists(dir) || std::filesystem::is_empty(dir)) << dir;
}

TEST(ManifestRefusal, ManifestSignedByAnotherKeyIsRefused) {
  const TempDir dir("takosumi-otherkey-");
  auto other = crypto::SignKeyPair::generate();
  ASSERT_TRUE(crypto::write_public_key_file(dir / "other.pub", other.public_key.to_base64()));
  {
    Stack stack(StackOptions{.pinned_key_override = dir / "other.pub"});
    expect_refused(stack, "manifest_bad_signature");
  }
}

TEST(ManifestRefusal, ExpiredManifestIsRefused) {
  Stack stack(StackOptions{.manifest_ttl_seconds = 0});
  expect_refused(stack, "manifest_expired");
}

}  // namespace
}  // namespace takosumi::testing
