#include "runner/policy/provider_lock.hpp"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

using takosumi::testing::TempDir;
constexpr const char* kNull = "registry.opentofu.org/hashicorp/null";

TEST(ProviderLock, ReadsProviderAddresses) {
  auto providers = locked_providers(
      "# This file is maintained automatically by \"tofu init\".\n\n"
      "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"3.3.1\"\n  hashes = [\n"
      "    \"h1:abc\",\n  ]\n}\n\nprovider \"Registry.OpenTofu.org/hashicorp/local\" {\n}\n");
  EXPECT_EQ(providers, (std::set<std::string>{"registry.opentofu.org/hashicorp/local", kNull}));
  TempDir dir("lock-");
  auto missing = read_locked_providers(dir.path() / ".terraform.lock.hcl");
  ASSERT_TRUE(missing);
  EXPECT_TRUE(missing->empty());
}

}  // namespace
}  // namespace takosumi::runner
