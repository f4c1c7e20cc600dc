// A provider mirror checked against pins in the lock file format, with the pins the real OpenTofu
// writes for the test mirror's package: a copy verifies, one altered byte, an unpinned package or
// a stray file is named, and pins that are not plain lock-file blocks are refused.
#include "runner/policy/mirror_verify.hpp"
#include "runner/policy/verified_mirror.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/failure_codes.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tofu_lock.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::TempDir;

class MirrorVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pins = parse_provider_pins(testing::tofu_lock_file(
        dir_.path(),
        "terraform {\n  required_providers {\n    null = { source = \"hashicorp/null\", version = "
        "\"3.3.1\" }\n  }\n}\n",
        test_paths::provider_mirror));
    ASSERT_TRUE(pins) << pins.error().to_string();
    pins_ = std::move(*pins);
    fs::create_directories(null_dir().parent_path());
    fs::copy(fs::path(test_paths::provider_mirror) / "registry.opentofu.org/hashicorp/null",
             null_dir(), fs::copy_options::recursive);
  }
  fs::path mirror() const { return dir_.path() / "mirror"; }
  fs::path null_dir() const { return mirror() / "registry.opentofu.org/hashicorp/null"; }
  std::string problems() {
    auto checked = verify_mirror(mirror(), pins_);
    EXPECT_FALSE(checked);
    if (checked) return "";
    EXPECT_EQ(checked.error().code, errc::kProviderChecksumMismatch);
    return checked.error().message;
  }

  TempDir dir_;
  std::vector<ProviderPin> pins_;
};

TEST_F(MirrorVerifyTest, AMirrorOfPinnedPackagesVerifies) {
  ASSERT_EQ(pins_.size(), 1u);
  EXPECT_EQ(pins_[0].address, "registry.opentofu.org/hashicorp/null");
  EXPECT_EQ(pins_[0].version, "3.3.1");
  auto checked = verify_mirror(mirror(), pins_);
  ASSERT_TRUE(checked) << checked.error().to_string();
  EXPECT_EQ(*checked, 1u);
}

TEST_F(MirrorVerifyTest, AnAlteredByteIsNamed) {
  const fs::path binary = null_dir() / "3.3.1/linux_amd64/terraform-provider-null_v3.3.1";
  {
    std::fstream f(binary, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    f.put('\x7f');
  }
  const std::string said = problems();
  EXPECT_NE(said.find("registry.opentofu.org/hashicorp/null 3.3.1 linux_amd64"), std::string::npos)
      << said;
  EXPECT_NE(said.find("altered"), std::string::npos) << said;
}

TEST_F(MirrorVerifyTest, AnUnpinnedPackageAndAStrayFileAreNamed) {
  fs::copy(null_dir() / "3.3.1", null_dir() / "9.9.9", fs::copy_options::recursive);
  std::ofstream(mirror() / "registry.opentofu.org/README") << "not a namespace";
  // A name chosen to forge a line and hide the rest of the screen is shown escaped.
  std::ofstream(mirror() / "x\ntakosumi-agent: mirror OK\x1b[8m") << "";
  const std::string said = problems();
  EXPECT_NE(said.find("hashicorp/null 9.9.9 linux_amd64 is not pinned"), std::string::npos) << said;
  EXPECT_NE(said.find("README is not a namespace directory"), std::string::npos) << said;
  EXPECT_NE(said.find("x\\x0atakosumi-agent: mirror OK\\x1b[8m is not a registry host"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find('\n'), std::string::npos) << said;
  EXPECT_EQ(said.find('\x1b'), std::string::npos) << said;
}

TEST(ProviderPins, OnlyPlainLockFileBlocksAreRead) {
  auto two = parse_provider_pins(R"(# comment
provider "registry.opentofu.org/hashicorp/null" {
  version     = "3.3.1"
  constraints = ">= 3.0"
  hashes = [
    "h1:abc=",
    "zh:0123",
  ]
}
provider "Registry.OpenTofu.org/hashicorp/null" {
  version = "3.2.0"
  hashes  = ["h1:def="]
})");
  ASSERT_TRUE(two) << two.error().to_string();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].address, "registry.opentofu.org/hashicorp/null");
  EXPECT_EQ((*two)[0].hashes, (std::vector<std::string>{"h1:abc=", "zh:0123"}));
  EXPECT_NE(find_pin(*two, "registry.opentofu.org/hashicorp/null", "3.2.0"), nullptr);

  for (const char* bad : {
           "provider \"a/b/c\" {\n  version = \"1\"\n  hashes = [\"h1:x\"]\n  url = \"x\"\n}",
           "provider \"a/b/c\" {\n  version = \"1\"\n}",
           "provider \"a/b/c\" {\n  hashes = [\"h1:x\"]\n}",
           "provider \"a/b/c\" {\n  version = \"${var.v}\"\n  hashes = [\"h1:x\"]\n}",
           "provider \"a/b/c\" {\n  version = \"1\"\n  hashes = [\"md5:x\"]\n}",
           "module \"x\" {}",
           "provider \"a/b/c\" {\n  version = \"1\"\n  version = \"2\"\n  hashes = [\"h1:x\"]\n}",
           "provider \"a/b/c\" {\n version = \"1\"\n hashes = [\"h1:x\"]\n}\n"
           "provider \"a/b/c\" {\n version = \"1\"\n hashes = [\"h1:y\"]\n}"}) {
    auto refused = parse_provider_pins(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error().code, errc::kInvalidArgument);
    EXPECT_TRUE(refused.error().message.starts_with("line ")) << refused.error().message;
  }
}

// What a Run loads with pins: the agent's own copy, hashed as copied, reused while the mirror
// stays, and unchanged by whatever happens to the mirror afterwards.
TEST_F(MirrorVerifyTest, RunsUseAVerifiedCopyTheMirrorCannotChangeAfterwards) {
  const fs::path store = dir_.path() / "store";
  PackageHashCache cache;
  auto copy = verified_mirror(mirror(), pins_, store, &cache);
  ASSERT_TRUE(copy) << copy.error().to_string();
  EXPECT_EQ(copy->parent_path(), store);
  const fs::path rel = "registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64";
  auto copied = package_hash(*copy / rel, false);
  ASSERT_TRUE(copied) << copied.error().to_string();
  EXPECT_NE(std::find(pins_[0].hashes.begin(), pins_[0].hashes.end(), *copied), pins_[0].hashes.end());
  // Read-only to its owner too: nothing of a Run rewrites it.
  const auto perms = fs::status(*copy / rel / "terraform-provider-null_v3.3.1").permissions();
  EXPECT_EQ(perms & fs::perms::owner_write, fs::perms::none);
  EXPECT_NE(perms & fs::perms::owner_exec, fs::perms::none);
  // The same mirror: the same copy, not made again.
  auto again = verified_mirror(mirror(), pins_, store, &cache);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *copy);
  // The mirror's binary swapped now: the copy a Run may be using is untouched, and the next Run
  // is refused.
  const fs::path binary = null_dir() / "3.3.1/linux_amd64/terraform-provider-null_v3.3.1";
  {
    std::fstream f(binary, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    f.put('\x7f');
  }
  EXPECT_EQ(*package_hash(*copy / rel, false), *copied);
  auto refused = verified_mirror(mirror(), pins_, store, &cache);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kProviderChecksumMismatch);
}

// `mirror add`: packages made on the connected side go into the site's mirror only as pinned,
// readable by the agent's user; adding them again changes nothing; another package at a pinned
// package's place, or an altered one, is refused.
TEST_F(MirrorVerifyTest, MirrorAddCopiesPinnedPackagesOnly) {
  const fs::path site = dir_.path() / "site-mirror";
  auto added = add_to_mirror(mirror(), site, pins_);
  ASSERT_TRUE(added) << added.error().to_string();
  EXPECT_EQ(added->added.size(), 1u);
  auto checked = verify_mirror(site, pins_);
  ASSERT_TRUE(checked) << checked.error().to_string();
  const auto binary = site / "registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64/terraform-provider-null_v3.3.1";
  EXPECT_NE(fs::status(binary).permissions() & fs::perms::others_exec, fs::perms::none);
  EXPECT_EQ(fs::status(binary).permissions() & fs::perms::others_write, fs::perms::none);
  auto again = add_to_mirror(mirror(), site, pins_);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_TRUE(again->added.empty());
  EXPECT_EQ(again->present.size(), 1u);
  // An altered package offered: refused before anything is copied.
  {
    std::fstream f(null_dir() / "3.3.1/linux_amd64/terraform-provider-null_v3.3.1",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    f.put('\x7f');
  }
  auto altered = add_to_mirror(mirror(), dir_.path() / "other-site", pins_);
  ASSERT_FALSE(altered);
  EXPECT_EQ(altered.error().code, errc::kProviderChecksumMismatch);
  EXPECT_FALSE(fs::exists(dir_.path() / "other-site"));
}

}  // namespace
}  // namespace takosumi::runner
