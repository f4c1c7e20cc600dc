// The h1:/zh: hashes of provider packages, checked against what the real OpenTofu writes into a
// lock file for the test mirror's package, and refused for what no package may hold.
#include "runner/policy/package_hash.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "crypto/sha256.hpp"
#include "common/failure_codes.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tofu_lock.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::TempDir;

const fs::path kNullPackage =
    fs::path(test_paths::provider_mirror) / "registry.opentofu.org/hashicorp/null/3.3.1/linux_amd64";

TEST(PackageHash, TheH1OfAnUnpackedPackageIsTheOneTofuLocks) {
  TempDir dir;
  const std::string lock = testing::tofu_lock_file(
      dir.path(),
      "terraform {\n  required_providers {\n    null = { source = \"hashicorp/null\", version = "
      "\"3.3.1\" }\n  }\n}\n",
      test_paths::provider_mirror);
  ASSERT_NE(lock.find("h1:"), std::string::npos) << lock;

  auto h1 = package_hash_h1(kNullPackage);
  ASSERT_TRUE(h1) << h1.error().to_string();
  EXPECT_NE(lock.find("\"" + *h1 + "\""), std::string::npos) << *h1 << " not in\n" << lock;
}

TEST(PackageHash, OneChangedByteChangesTheHashAndALinkIsRefused) {
  TempDir dir;
  const fs::path copy = dir.path() / "pkg";
  fs::copy(kNullPackage, copy, fs::copy_options::recursive);
  auto original = package_hash_h1(copy);
  ASSERT_TRUE(original) << original.error().to_string();
  EXPECT_EQ(*original, *package_hash_h1(kNullPackage));

  fs::path binary;
  for (const auto& e : fs::directory_iterator(copy))
    if (e.is_regular_file()) binary = e.path();
  ASSERT_FALSE(binary.empty());
  {
    std::fstream f(binary, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(100);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x01);
    f.seekp(100);
    f.write(&c, 1);
  }
  auto altered = package_hash_h1(copy);
  ASSERT_TRUE(altered) << altered.error().to_string();
  EXPECT_NE(*altered, *original);

  fs::create_symlink("/etc/passwd", copy / "extra");
  auto linked = package_hash_h1(copy);
  ASSERT_FALSE(linked);
  EXPECT_EQ(linked.error().code, errc::kProviderChecksumMismatch);
  EXPECT_NE(linked.error().message.find("extra"), std::string::npos) << linked.error().message;
}

TEST(PackageHash, TheZhOfAPackedPackageIsItsSha256) {
  TempDir dir;
  const fs::path zip = dir.path() / "terraform-provider-x_1.0.0_linux_amd64.zip";
  std::ofstream(zip) << "PK\x03\x04 not really a zip";
  auto zh = package_hash_zh(zip);
  ASSERT_TRUE(zh) << zh.error().to_string();
  EXPECT_EQ(*zh, "zh:" + *crypto::sha256_file_hex(zip));
  fs::create_symlink(zip, dir.path() / "link.zip");
  EXPECT_FALSE(package_hash_zh(dir.path() / "link.zip"));
}

}  // namespace
}  // namespace takosumi::runner
